// Migration 1: the telemetry schema. Times are milliseconds since the epoch (bigint), as in the API.
// Metrics are partitioned by day of received_at (partitions are created as data arrives, and retention
// drops whole partitions); every list and cursor of the API reads along a primary key or an index here.
// Key columns sort by bytes (COLLATE "C"), the order LMDB keeps, so pages and cursors are the same on both.
export const schema = `
CREATE TABLE devices (
  id text COLLATE "C" PRIMARY KEY,
  name text NOT NULL,
  "group" text,
  serial text,
  hardware_version text,
  software_type text,
  software_version text,
  build_id text,
  registered boolean NOT NULL,
  encrypted boolean NOT NULL,
  created_at bigint NOT NULL,
  last_seen bigint,
  boot_count bigint,
  offline boolean NOT NULL
);
CREATE INDEX devices_group ON devices ("group");

CREATE TABLE device_keys (
  device text COLLATE "C" PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
  key bytea NOT NULL
);

-- Idempotency: one row per content stored under (device, sequence). The primary key is the rule that a
-- chunk of the same content is stored once, whichever node it reaches.
CREATE TABLE chunk_marks (
  device text COLLATE "C" NOT NULL,
  sequence bigint NOT NULL,
  digest bytea NOT NULL,
  at bigint NOT NULL,
  PRIMARY KEY (device, sequence, digest)
);

CREATE TABLE faults (
  device text COLLATE "C" NOT NULL,
  received_at bigint NOT NULL,
  sequence bigint NOT NULL,
  pc bigint NOT NULL,
  lr bigint NOT NULL,
  sp bigint NOT NULL,
  psr bigint NOT NULL,
  cfsr bigint NOT NULL,
  hfsr bigint NOT NULL,
  mmfar bigint NOT NULL,
  bfar bigint NOT NULL,
  uptime_ms bigint NOT NULL,
  software_version text,
  build_id text,
  symbol text,
  -- Waiting for symbolication (never tried, waiting for its build's ELF, or to be tried again).
  pending boolean NOT NULL DEFAULT true,
  PRIMARY KEY (device, received_at, sequence)
);
CREATE INDEX faults_received ON faults (received_at);
CREATE INDEX faults_pending ON faults ((coalesce(build_id, '')), device, received_at, sequence) WHERE pending;

CREATE TABLE reboots (
  device text COLLATE "C" NOT NULL,
  received_at bigint NOT NULL,
  sequence bigint NOT NULL,
  reason text NOT NULL,
  boot_count bigint NOT NULL,
  pc bigint NOT NULL,
  lr bigint NOT NULL,
  PRIMARY KEY (device, received_at, sequence)
);
CREATE INDEX reboots_received ON reboots (received_at);

CREATE TABLE traces (
  device text COLLATE "C" NOT NULL,
  received_at bigint NOT NULL,
  sequence bigint NOT NULL,
  uptime_ms bigint NOT NULL,
  dropped bigint NOT NULL,
  text text NOT NULL,
  PRIMARY KEY (device, received_at, sequence)
);
CREATE INDEX traces_received ON traces (received_at);

CREATE TABLE metrics (
  device text COLLATE "C" NOT NULL,
  received_at bigint NOT NULL,
  sequence bigint NOT NULL,
  entry integer NOT NULL,
  key text NOT NULL,
  kind text NOT NULL,
  value double precision NOT NULL,
  uptime_ms bigint NOT NULL,
  PRIMARY KEY (device, received_at, sequence, entry)
) PARTITION BY RANGE (received_at);

CREATE TABLE groups (
  name text COLLATE "C" PRIMARY KEY,
  description text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE ota_targets (
  id text COLLATE "C" PRIMARY KEY,
  "group" text,
  software_type text NOT NULL,
  version text NOT NULL,
  build_id text,
  url text,
  created_at bigint NOT NULL
);

CREATE TABLE elf_files (
  build_id text COLLATE "C" PRIMARY KEY,
  software_type text,
  software_version text,
  size bigint NOT NULL,
  file text NOT NULL,
  uploaded_at bigint NOT NULL
);

-- '<software type>@<version>' → the build uploaded under it last.
CREATE TABLE elf_versions (
  name text COLLATE "C" PRIMARY KEY,
  build_id text NOT NULL
);
`
