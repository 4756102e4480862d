// The [cluster] section: the cluster's name, default domain and ACME contact (read by the proxy too),
// how nodes join and are watched, and the etcd cluster masters are to share state in. One schema,
// built when the server validates its configuration.
import type { Static } from '@sinclair/typebox'
import type { SectionSchema } from '../../kernel/index.js'

export const clusterSection = ((Type) => Type.Object({
  name: Type.String({ default: '', description: 'Name of the cluster, shown in cluster info.' }),
  domain: Type.String({ default: '', description: 'Default domain: a routed service without a domain of its own is served at <service>.<domain>.' }),
  acme_email: Type.String({ default: '', description: 'ACME contact when [acme].email is not set.' }),
  join: Type.String({ default: '', description: 'Run as an agent of the leader at this address: <host>:<port> of its control listener (or an http, https, ws or wss URL); several masters separated by commas, tried in turn until the leader accepts; empty: this server leads (BERTH_JOIN, berth server --join).' }),
  join_token: Type.String({ default: '', description: 'The agent token (role agent) to join with; empty: the file join.token in the state directory (BERTH_JOIN_TOKEN).' }),
  advertise_address: Type.String({ default: '', description: 'Agent: the host the leader reaches this node\'s published ports at, replacing a loopback or wildcard publish address; empty: as the engine publishes them ([reconciler].publish_address).' }),
  heartbeat_interval_secs: Type.Number({ exclusiveMinimum: 0, default: 5, description: 'Seconds between an agent\'s heartbeats (the leader tells its agents).' }),
  offline_after_secs: Type.Number({ exclusiveMinimum: 0, default: 15, description: 'A node without a heartbeat this long is offline.' }),
  reschedule_after_secs: Type.Number({ minimum: 0, default: 60, description: 'A node offline or unhealthy this long has its replicas placed on other nodes.' }),
  deploy_timeout_secs: Type.Number({ exclusiveMinimum: 0, default: 300, description: 'Longest wait for an agent to apply its part of a deploy.' }),
  schedule_leader: Type.Boolean({ default: true, description: 'The leader runs replicas as well; false: only agents do (the leader is drained).' }),
  etcd: Type.Object({
    endpoints: Type.Array(Type.String(), { default: [], description: 'Client URLs of the etcd members (all http:// or all https://); empty: no etcd.' }),
    ca_file: Type.String({ default: '', description: 'PEM file of the CA that signed the members\' certificates; empty: the system\'s roots (https only).' }),
    cert_file: Type.String({ default: '', description: 'PEM client certificate (with key_file), for members that require one.' }),
    key_file: Type.String({ default: '', description: 'PEM private key of cert_file.' }),
    username: Type.String({ default: '', description: 'etcd user (with password); empty: no authentication.' }),
    password: Type.String({ default: '', description: 'Password of username (BERTH_ETCD_PASSWORD); never logged.' }),
    prefix: Type.String({ default: '', description: 'Prefix of every key; empty: /berth/<cluster name>/ (/berth/default/ without a name).' }),
    lease_ttl_seconds: Type.Integer({ minimum: 2, maximum: 60, default: 5, description: 'TTL of the leader\'s lease: a leader that stopped renewing it is replaced within about this time.' })
  }, { additionalProperties: false, default: {} })
}, { additionalProperties: false })) satisfies SectionSchema

export type ClusterConfig = Static<ReturnType<typeof clusterSection>>
