// Leadership among masters sharing one etcd: at most one holds the key `<prefix>leader`, attached to a
// lease of `lease_ttl_seconds`, and everything it does is fenced by holding that key.
//
// Timing (TTL T, interval I = T/5, each call's deadline I): every I the lease is renewed (each renewal
// on its own, so one stuck until its deadline delays none of the next) and, without leadership, the
// key is claimed if free. A renewal sent at time s proves etcd keeps the lease until s + T at least
// (etcd extends it on receipt, after s), so this node counts itself leader only until s + T - I for
// the latest renewal acknowledged (monotonic clock, checked on every `isLeader()`; a timer gives the
// leadership up at that moment). So a leader cut off from etcd, or paused, stops acting at least I
// before its key can expire and another master take over. After a crash another master leads within
// about T + I (6 s at the default T = 5 s). Writes on the leader's authority go through `fenced()`:
// one etcd transaction that applies only while the key still has this term's create revision and
// lease, so a leader that wakes after its key expired cannot write. Every master campaigning also
// lists itself under `<prefix>masters/<id>` on its lease, so the masters alive can be listed.
import { EventEmitter } from 'node:events'
import { performance } from 'node:perf_hooks'
import { EtcdLeaseInvalidError, type Etcd3, type IOperation, type IKeyValue, type Lease } from 'etcd3'
import { renewIntervalMs, type EtcdSettings } from './etcd.js'

/** Who leads: written as the key's value. */
export interface LeaderIdentity {
  id: string
  name: string
  /** The control listener's address agents and operators reach. */
  address: string
}

/** One tenure of leadership: the key, its create revision and its lease. Fenced writes compare on all three. */
export interface LeaderTerm {
  key: string
  createRevision: string
  lease: string
}

export interface LeadershipEvents {
  /** This node became leader. */
  elected: [term: LeaderTerm]
  /** This node stopped being leader (why, in one line). */
  lost: [reason: string]
  /** The leader changed (undefined: none known). */
  leader: [leader: LeaderIdentity | undefined]
  /** A call to etcd failed (leadership is kept while the lease is known to be held). */
  failed: [error: Error]
}

export interface LeadershipOptions extends Pick<EtcdSettings, 'prefix' | 'leaseTtlSeconds'> {
  self: LeaderIdentity
}

/** Thrown by `fenced()` when this node does not lead (locally known, nothing sent). */
export class NotLeader extends Error {}

/** Tries of one renewal refused at once (each to a member drawn anew). */
const RENEWAL_ATTEMPTS = 3

interface HeldLease { lease: Lease, id: string, validUntil: number, renewals: NodeJS.Timeout, listed: boolean }

/**
 * A transaction that applies `ops` only while `term`'s key exists with the same create revision and
 * lease; true when it applied. The fence itself, whatever the caller believes about its leadership.
 */
export async function fencedTxn (client: Etcd3, term: LeaderTerm, ops: IOperation[]): Promise<boolean> {
  const answer = await client.if(term.key, 'Create', '==', term.createRevision).and(term.key, 'Lease', '==', term.lease).then(...ops).commit()
  return answer.succeeded
}

function identityOf (kv: IKeyValue | undefined): LeaderIdentity | undefined {
  if (kv === undefined) return undefined
  try {
    const value = JSON.parse(kv.value.toString()) as Partial<LeaderIdentity>
    return { id: String(value.id), name: String(value.name), address: String(value.address) }
  } catch {
    return undefined
  }
}

export class Leadership extends EventEmitter<LeadershipEvents> {
  readonly key: string
  private readonly ttlMs: number
  private readonly intervalMs: number
  private held: HeldLease | undefined
  private current: LeaderTerm | undefined
  private known: LeaderIdentity | undefined
  private loop: NodeJS.Timeout | undefined
  private expiry: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = true

  constructor (private readonly client: Etcd3, private readonly options: LeadershipOptions) {
    super()
    this.key = `${options.prefix}leader`
    this.ttlMs = options.leaseTtlSeconds * 1000
    this.intervalMs = renewIntervalMs(options)
  }

  /** Campaign: claim the key whenever it is free, renew the lease while holding it. */
  start (): void {
    if (!this.stopped) return
    this.stopped = false
    this.schedule(0)
  }

  /** True only while this node holds the key and its lease is known to be alive in etcd. */
  isLeader (): boolean {
    return this.current !== undefined && this.held !== undefined && performance.now() < this.held.validUntil
  }

  /** This tenure, while leading. */
  term (): LeaderTerm | undefined {
    return this.isLeader() ? this.current : undefined
  }

  /** The leader as last seen in etcd: this node while it leads, none while its lease is in doubt. */
  leader (): LeaderIdentity | undefined {
    if (this.current !== undefined) return this.isLeader() ? this.options.self : undefined
    return this.known
  }

  /** The leader: as last seen, else asked of etcd now (a node that has just lost its leadership knows none until its next attempt). */
  async findLeader (): Promise<LeaderIdentity | undefined> {
    const known = this.leader()
    if (known !== undefined || this.current !== undefined) return known
    const kv = await this.client.get(this.key).exec().then(answer => answer.kvs[0], () => undefined)
    if (this.current === undefined && this.known === undefined) this.see(identityOf(kv))
    return this.known
  }

  /**
   * Apply `ops` in one transaction on this node's authority: NotLeader when it does not lead; false
   * when etcd refused (the key expired or changed hands), and then leadership is given up at once.
   */
  async fenced (...ops: IOperation[]): Promise<boolean> {
    const term = this.term()
    if (term === undefined) throw new NotLeader('not the leader')
    const applied = await fencedTxn(this.client, term, ops)
    if (!applied && this.current === term) this.lose('a fenced write was refused: the leadership key expired or changed hands')
    return applied
  }

  /**
   * Stop campaigning. A leader stops leading at once (`lost` is emitted before this returns to its
   * caller), then resigns: it deletes its key (fenced), and the lease is revoked.
   */
  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.loop)
    const term = this.current
    this.lose('stopped')
    await this.running
    if (term !== undefined) await fencedTxn(this.client, term, [this.client.delete().key(this.key)]).catch(() => false)
    await this.dropLease()
  }

  private schedule (delayMs: number): void {
    if (this.stopped) return
    this.loop = setTimeout(() => {
      this.running = this.tick().catch(err => { this.emit('failed', err as Error) }).finally(() => {
        this.running = undefined
        this.schedule(this.intervalMs)
      })
    }, delayMs)
  }

  private async tick (): Promise<void> {
    await this.ensureLease()
    const held = this.held
    if (held === undefined || this.stopped) return
    if (!held.listed) {
      await this.client.put(`${this.options.prefix}masters/${this.options.self.id}`).value(JSON.stringify(this.options.self)).lease(held.id)
      held.listed = true
    }
    const term = this.current
    if (term !== undefined) {
      // Still ours? (An operator may have deleted the key; then another may claim it.)
      const answer = await this.client.if(term.key, 'Create', '==', term.createRevision).and(term.key, 'Lease', '==', term.lease)
        .else(this.client.get(this.key)).commit()
      if (!answer.succeeded && this.current === term) {
        this.lose('the leadership key was removed or changed hands')
        this.see(identityOf(answer.responses[0]?.response_range.kvs[0]))
      }
      return
    }
    const value = JSON.stringify(this.options.self)
    const answer = await this.client.if(this.key, 'Create', '==', 0)
      .then(this.client.put(this.key).value(value).lease(held.id))
      .else(this.client.get(this.key)).commit()
    if (!answer.succeeded) {
      this.see(identityOf(answer.responses[0]?.response_range.kvs[0]))
      return
    }
    if (this.stopped || this.held !== held || performance.now() >= held.validUntil) return
    const won: LeaderTerm = { key: this.key, createRevision: answer.header.revision, lease: held.id }
    this.current = won
    this.known = this.options.self
    this.emit('elected', won)
    this.emit('leader', this.options.self)
  }

  /** Grant a lease when none is held; it is then renewed every interval, each renewal on its own. */
  private async ensureLease (): Promise<void> {
    if (this.held !== undefined) return
    const sentAt = performance.now()
    const lease = this.client.lease(this.options.leaseTtlSeconds, { autoKeepAlive: false })
    const id = await lease.grant()
    const held: HeldLease = { lease, id, validUntil: sentAt + this.ttlMs - this.intervalMs, renewals: setInterval(() => { void this.renew(held) }, this.intervalMs), listed: false }
    this.held = held
    this.armExpiry()
  }

  /**
   * Renew the lease and note until when it surely lives. Renewals do not wait for each other: one
   * stuck until its deadline (a member gone, etcd electing its own leader) delays none of the next. A
   * renewal refused at once (the member it went to is down: its stream is not retried by the client)
   * is sent again, to a member drawn anew, while its interval lasts: three members, one down, would
   * otherwise fail one renewal in three and could lose the lease on a run of bad draws.
   */
  private async renew (held: HeldLease): Promise<void> {
    const started = performance.now()
    let sentAt = started
    for (let attempt = 1; ; attempt++) {
      sentAt = performance.now()
      try {
        await held.lease.keepaliveOnce({ deadline: Date.now() + Math.max(1, started + this.intervalMs - sentAt) })
        break
      } catch (err) {
        if (this.held !== held) return
        if (err instanceof EtcdLeaseInvalidError) {
          this.lose('the lease expired in etcd')
          await this.dropLease()
          return
        }
        this.emit('failed', err as Error)
        if (attempt >= RENEWAL_ATTEMPTS || performance.now() - started >= this.intervalMs / 2) return
      }
    }
    if (this.held !== held) return
    held.validUntil = Math.max(held.validUntil, sentAt + this.ttlMs - this.intervalMs)
    this.armExpiry()
  }

  /** Give up the leadership (and the lease) the moment the lease is no longer known to be alive. */
  private armExpiry (): void {
    clearTimeout(this.expiry)
    const held = this.held
    if (held === undefined) return
    this.expiry = setTimeout(() => {
      if (this.held !== held) return
      if (this.current !== undefined) this.lose(`the lease was not renewed within ${this.ttlMs - this.intervalMs} ms`)
      void this.dropLease()
    }, Math.max(0, held.validUntil - performance.now()))
  }

  private async dropLease (): Promise<void> {
    clearTimeout(this.expiry)
    const held = this.held
    this.held = undefined
    clearInterval(held?.renewals)
    // Revoking removes the key at once when it is still ours, so that another may lead sooner.
    await held?.lease.revoke().catch(() => {})
  }

  private lose (reason: string): void {
    if (this.current === undefined) return
    this.current = undefined
    this.known = undefined
    this.emit('lost', reason)
    this.emit('leader', undefined)
  }

  private see (leader: LeaderIdentity | undefined): void {
    if (leader?.id === this.known?.id && leader?.name === this.known?.name && leader?.address === this.known?.address) return
    this.known = leader
    this.emit('leader', leader)
  }
}
