// Migration 3: ELF files in the database, so that a node given a fault of a build uploaded to another
// node can symbolicate it (the node writes the file into its own ELF directory when it needs it).
export const elfBytes = `
ALTER TABLE elf_files ADD COLUMN bytes bytea;
`
