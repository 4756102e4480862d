// The shared store's mirror without etcd: key order is the UTF-8 byte order, and a change is applied
// once whichever of etcd's acknowledgement and the watch brings it first, never undone by an older one.
import t from 'tap'
import { compareKeys, MirrorTable } from '../../../plugins/cluster/shared-state/mirror.js'

const bytes = (text: string): Buffer => Buffer.from(text)
const keysOf = (table: MirrorTable): string[] => table.range().map(([key]) => key)

t.test('keys compare as their UTF-8 bytes do', async t => {
  const keys = ['', 'a', 'ab', 'b', 'B', '~', '\u007f', '\u0080', 'é', '\u07ff', '\u0800', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '😀', '😀a', '\u{10FFFF}', 'a😀', 'a\uFFFF']
  for (const a of keys) {
    for (const b of keys) t.equal(Math.sign(compareKeys(a, b)), Math.sign(Buffer.compare(bytes(a), bytes(b))), `${JSON.stringify(a)} against ${JSON.stringify(b)}`)
  }
})

t.test('a change older than the one known is ignored; a removal of this master\'s holds until the watch shows it', async t => {
  const table = new MirrorTable()
  table.put('k', bytes('v5'), 5)
  table.put('k', bytes('v4'), 4)
  t.same(table.get('k'), bytes('v5'), 'an older put does not undo a newer one')
  table.remove('k', 7, true)
  table.put('k', bytes('v6'), 6)
  t.equal(table.get('k'), undefined, 'a put older than this master\'s removal (the watch behind) does not bring the key back')
  table.remove('k', 7, false)
  table.watchedUpTo(7)
  table.put('k', bytes('v8'), 8)
  t.same(table.get('k'), bytes('v8'), 'a newer put applies')
  table.remove('k', 8, false)
  t.same(table.get('k'), bytes('v8'), 'a removal as old as the put does not apply')
})

t.test('a transaction\'s writes are laid over the range, bounds, order and limit kept', async t => {
  const table = new MirrorTable()
  for (const [i, key] of ['a', 'c', 'e', 'g'].entries()) table.put(key, bytes(key), i + 1)
  const pending = new Map<string, Buffer | null>([['b', bytes('b')], ['c', null], ['h', bytes('h')]])
  t.same(table.range({}, pending).map(([key]) => key), ['a', 'b', 'e', 'g', 'h'])
  t.same(table.range({ start: 'b', end: 'g', limit: 2 }, pending).map(([key]) => key), ['b', 'e'])
  t.same(table.range({ reverse: true, start: 'g', limit: 3 }, pending).map(([key]) => key), ['g', 'e', 'b'])
  t.same(keysOf(table), ['a', 'c', 'e', 'g'], 'the table itself is unchanged')
})
