// Migration 6: small JSON documents by kind and id (OTA images' records and releases), changed one at a
// time under a transaction-scoped advisory lock of the plugin's fifth key space, and bytes kept whole
// (firmware images), so that every node sharing the database serves the same images.
export const documents = `
CREATE TABLE documents (
  kind text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  doc jsonb NOT NULL,
  PRIMARY KEY (kind, id)
);

CREATE TABLE blobs (
  id text PRIMARY KEY,
  bytes bytea NOT NULL
);
`
