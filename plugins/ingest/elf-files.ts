// Uploaded ELF files on disk: one per build in the ELF directory, named in its record relative to that
// directory; carried by /admin/backup, and written out again at start after `berth state restore`.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { basename, isAbsolute, join } from 'node:path'
import type { Logger } from 'pino'
import type { ElfFile, TelemetryStorage } from './storage/contract.js'
import type { TelemetryStore } from './store.js'

/** How an ELF file is named in the ELF directory (build ids and SHA-1s are lowercase hex). */
const FILE_NAME = /^[0-9a-f]+\.elf$/

/** Write the file `name` of the ELF directory: 0600, whole or not at all. */
function writeElf (dir: string, name: string, bytes: Buffer): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(join(dir, `${name}.partial`), bytes, { mode: 0o600 })
  renameSync(join(dir, `${name}.partial`), join(dir, name))
}

/** Write `bytes` as the ELF of build `id`; returns the record's file name. */
export function saveElf (dir: string, id: string, bytes: Buffer): string {
  const name = `${id}.elf`
  writeElf(dir, name, bytes)
  return name
}

/** The absolute path of a record's file. */
export function elfPath (dir: string, elf: ElfFile): string {
  return join(dir, elf.file)
}

/**
 * The path of `elf`'s file in this node's ELF directory: written there first from the storage when the
 * build was uploaded to another node sharing it (PostgreSQL); undefined when neither has it.
 */
export async function localElf (storage: TelemetryStorage, dir: string, elf: ElfFile): Promise<string | undefined> {
  const path = elfPath(dir, elf)
  if (existsSync(path)) return path
  const bytes = await storage.elfBytes(elf.build_id)
  if (bytes === undefined || !FILE_NAME.test(elf.file)) return undefined
  writeElf(dir, elf.file, bytes)
  return path
}

/**
 * The files the ELF records name, as [file name, bytes] for a backup, read one at a time when the
 * backup asks (after its snapshot, so every record of the snapshot is among them; a file missing
 * from disk is left out).
 */
export function * elfBackupEntries (store: TelemetryStore, dir: string): Generator<readonly [string, Buffer]> {
  const records = [...store.elves.getRange()].map(({ value }) => value)
  for (const record of records) {
    const path = elfPath(dir, record)
    if (existsSync(path)) yield [record.file, readFileSync(path)]
  }
}

/**
 * At start: write out the ELF files a restored backup carried (then drop them from the store), and
 * name every record's file relative to the ELF directory: records of older versions hold absolute
 * paths, whose file is copied in when it is not there yet.
 */
export async function settleElfFiles (storage: TelemetryStorage, store: TelemetryStore, dir: string, log: Logger): Promise<void> {
  const restored: string[] = []
  for (const { key: name, value } of store.restoredElves.getRange()) {
    if (FILE_NAME.test(name)) writeElf(dir, name, value)
    else log.warn({ name }, 'a restored ELF file with an unexpected name was left out')
    restored.push(name)
  }
  const moved: ElfFile[] = []
  for (const value of await storage.elves()) {
    if (!isAbsolute(value.file)) continue
    const name = basename(value.file)
    if (!existsSync(join(dir, name)) && existsSync(value.file)) writeElf(dir, name, readFileSync(value.file))
    moved.push({ ...value, file: name })
  }
  if (restored.length === 0 && moved.length === 0) return
  for (const record of moved) await storage.putElf({ record, version: null })
  await store.transaction(() => {
    for (const name of restored) store.restoredElves.remove(name)
  })
  log.info({ restored: restored.length, relative: moved.length, elf_dir: dir }, 'ELF files settled: restored ones written out, records named relative to the ELF directory')
}
