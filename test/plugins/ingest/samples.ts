// Sample records of every chunk type, as a device would report them.
import type { ChunkPayload } from '../../../plugins/ingest/wire/payloads.js'

export const DEVICE = '00112233aabbccdd'

export const SAMPLES: ChunkPayload[] = [
  { type: 'DeviceInfo', record: { serial: 'SN-0042', hardware_version: 'evt-2', software_type: 'main', software_version: '1.4.2', build_id: 'a1b2c3d4e5f60718' } },
  { type: 'RebootReason', record: { reason: 'watchdog', boot_count: 17, pc: 0x08001234, lr: 0x08000f01 } },
  { type: 'FaultRecord', record: { pc: 0x0800abcd, lr: 0x08000123, sp: 0x20001ff0, psr: 0x61000000, cfsr: 0x00008200, hfsr: 0x40000000, mmfar: 0, bfar: 0xe000ed38, uptime_ms: 123456, stack: Buffer.from('f81f0020' + '5b0a0008' + '00000000' + '11030008', 'hex') } },
  {
    type: 'Metrics',
    record: {
      uptime_ms: 60000,
      entries: [
        { key: 'battery_mv', kind: 'gauge', value: 3712, uptime_ms: 59000 },
        { key: 'tx_packets', kind: 'increment', value: 5, uptime_ms: 59500 },
        { key: 'loop_us', kind: 'observe', value: 880, uptime_ms: 59900 }
      ]
    }
  },
  { type: 'Trace', record: { uptime_ms: 61000, dropped: 3, data: Buffer.from('boot ok\nsensor init\nradio up\n') } },
  { type: 'Heartbeat', record: { uptime_ms: 62000, boot_count: 17 } }
]
