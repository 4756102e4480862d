// A STAND-IN for a BLE radio: no Bluetooth hardware can be had here, so this serves BlueZ's D-Bus
// API (ObjectManager, Adapter1, Device1, GattService1, GattCharacteristic1, as bluetoothd publishes
// them) on a private, real dbus-daemon. What the gateway does over D-Bus is real; the devices, their
// advertisements and their notifications are what the test makes up.
import { connect } from 'node:net'
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import dbus from 'dbus-next'
import { ensureDebianPackages } from './component.js'
import { startDaemon } from './daemon.js'
import { pollUntil } from './poll.js'
import { tempDir } from './tmp.js'

const { Interface } = dbus.interface
type Props = Record<string, dbus.Variant>

interface Teardown { teardown(fn: () => void | Promise<void>): void }

/** A real dbus-daemon on a socket of its own; `address` is what DBUS_SYSTEM_BUS_ADDRESS takes. */
export async function privateBus (t: Teardown): Promise<string> {
  await ensureDebianPackages(['dbus-daemon'])
  const socket = join(tempDir(t), 'bus')
  const address = `unix:path=${socket}`
  await startDaemon(t, 'dbus-daemon', {
    command: 'dbus-daemon',
    args: ['--session', '--nofork', `--address=${address}`],
    logFile: join(tempDir(t), 'dbus.log'),
    // The socket file appears when it is bound, a moment before the daemon listens: ready when a connection is taken.
    ready: async () => existsSync(socket) && await new Promise<boolean>(resolve => {
      const probe = connect(socket, () => { probe.end(); resolve(true) })
      probe.on('error', () => { resolve(false) })
    })
  })
  return address
}

class ObjectManager extends Interface {
  constructor (readonly objects: () => Record<string, Record<string, Props>>) { super('org.freedesktop.DBus.ObjectManager') }
  GetManagedObjects (): Record<string, Record<string, Props>> { return this.objects() }
}
ObjectManager.configureMembers({ methods: { GetManagedObjects: { outSignature: 'a{oa{sa{sv}}}' } } })

class Adapter extends Interface {
  Address = '00:1A:7D:DA:71:13'
  Powered = true
  Discovering = false
  filter: string[] = []
  constructor (readonly discovered: () => void) { super('org.bluez.Adapter1') }
  SetDiscoveryFilter (filter: Props): void { this.filter = (filter.UUIDs?.value ?? []) as string[] }
  StartDiscovery (): void { this.Discovering = true; this.discovered() }
  StopDiscovery (): void { this.Discovering = false }
}
Adapter.configureMembers({
  properties: { Address: { signature: 's', access: 'read' }, Powered: { signature: 'b', access: 'read' }, Discovering: { signature: 'b', access: 'read' } },
  methods: { SetDiscoveryFilter: { inSignature: 'a{sv}' }, StartDiscovery: {}, StopDiscovery: {} }
})

class Device extends Interface {
  Connected = false
  ServicesResolved = false
  connects = 0
  constructor (readonly Address: string, readonly Name: string, readonly UUIDs: string[], readonly Adapter: string, readonly resolve: () => void) { super('org.bluez.Device1') }
  Connect (): void {
    this.connects++
    this.Connected = true
    this.ServicesResolved = true
    this.resolve()
    Interface.emitPropertiesChanged(this, { Connected: true, ServicesResolved: true }, [])
  }

  Disconnect (): void {
    this.Connected = false
    this.ServicesResolved = false
    Interface.emitPropertiesChanged(this, { Connected: false, ServicesResolved: false }, [])
  }
}
Device.configureMembers({
  properties: {
    Address: { signature: 's', access: 'read' },
    Name: { signature: 's', access: 'read' },
    UUIDs: { signature: 'as', access: 'read' },
    Adapter: { signature: 'o', access: 'read' },
    Connected: { signature: 'b', access: 'read' },
    ServicesResolved: { signature: 'b', access: 'read' }
  },
  methods: { Connect: {}, Disconnect: {} }
})

class GattService extends Interface {
  readonly Primary = true
  constructor (readonly UUID: string, readonly Device: string) { super('org.bluez.GattService1') }
}
GattService.configureMembers({ properties: { UUID: { signature: 's', access: 'read' }, Primary: { signature: 'b', access: 'read' }, Device: { signature: 'o', access: 'read' } } })

class Characteristic extends Interface {
  Notifying = false
  Value: Buffer = Buffer.alloc(0)
  readonly Flags = ['notify']
  constructor (readonly UUID: string, readonly Service: string) { super('org.bluez.GattCharacteristic1') }
  StartNotify (): void { this.Notifying = true; Interface.emitPropertiesChanged(this, { Notifying: true }, []) }
  StopNotify (): void { this.Notifying = false; Interface.emitPropertiesChanged(this, { Notifying: false }, []) }
}
Characteristic.configureMembers({
  properties: {
    UUID: { signature: 's', access: 'read' },
    Service: { signature: 'o', access: 'read' },
    Flags: { signature: 'as', access: 'read' },
    Notifying: { signature: 'b', access: 'read' },
    Value: { signature: 'ay', access: 'read' }
  },
  methods: { StartNotify: {}, StopNotify: {} }
})

export interface StandinDevice {
  address: string
  name: string
  /** Advertised service UUIDs. */
  services: string[]
  /** The GATT service and characteristic it has once connected. */
  gatt?: { service: string, characteristic: string }
}

/** BlueZ as the stand-in serves it: one adapter (or none), and devices found when discovery starts. */
export class BluezStandin {
  readonly bus: dbus.MessageBus
  readonly adapter?: Adapter
  readonly devices = new Map<string, { device: Device, characteristic?: Characteristic }>()
  readonly #interfaces = new Map<string, dbus.interface.Interface[]>()

  private constructor (address: string, withAdapter: boolean, readonly advertised: StandinDevice[]) {
    this.bus = dbus.sessionBus({ busAddress: address })
    this.#export('/', new ObjectManager(() => this.#managedObjects()))
    if (withAdapter) {
      this.adapter = new Adapter(() => { for (const device of this.advertised) this.#discover(device) })
      this.#export('/org/bluez/hci0', this.adapter)
    }
  }

  static async start (t: Teardown, address: string, options: { adapter: boolean, devices: StandinDevice[] }): Promise<BluezStandin> {
    const standin = new BluezStandin(address, options.adapter, options.devices)
    await standin.bus.requestName('org.bluez', 0)
    t.teardown(() => { standin.bus.disconnect() })
    return standin
  }

  #export (path: string, iface: dbus.interface.Interface): void {
    this.bus.export(path, iface)
    this.#interfaces.set(path, [...(this.#interfaces.get(path) ?? []), iface])
  }

  #discover (spec: StandinDevice): void {
    const path = `/org/bluez/hci0/dev_${spec.address.replaceAll(':', '_')}`
    if (this.devices.has(spec.address)) return
    const entry: { device: Device, characteristic?: Characteristic } = {
      device: new Device(spec.address, spec.name, spec.services, '/org/bluez/hci0', () => {
        if (spec.gatt === undefined || entry.characteristic !== undefined) return
        this.#export(`${path}/service000a`, new GattService(spec.gatt.service, path))
        entry.characteristic = new Characteristic(spec.gatt.characteristic, `${path}/service000a`)
        this.#export(`${path}/service000a/char000b`, entry.characteristic)
      })
    }
    this.devices.set(spec.address, entry)
    this.#export(path, entry.device)
  }

  #managedObjects (): Record<string, Record<string, Props>> {
    const objects: Record<string, Record<string, Props>> = {}
    for (const [path, interfaces] of this.#interfaces) {
      for (const iface of interfaces) {
        const { $name: name, $properties: properties } = iface as unknown as { $name: string, $properties?: Record<string, { signature: string }> }
        if (properties === undefined) continue
        const props: Props = {}
        for (const [key, { signature }] of Object.entries(properties)) props[key] = new dbus.Variant(signature, (iface as unknown as Record<string, unknown>)[key])
        ;(objects[path] ??= {})[name] = props
      }
    }
    return objects
  }

  /** Wait until the gateway has subscribed to a device's notifications. */
  async subscribed (address: string): Promise<void> {
    await pollUntil(() => this.devices.get(address)?.characteristic?.Notifying, { what: `the gateway to subscribe to ${address}` })
  }

  /** The device sends one packet as a notification. */
  notify (address: string, packet: Buffer): void {
    const characteristic = this.devices.get(address)?.characteristic
    if (characteristic?.Notifying !== true) throw new Error(`${address} has no subscriber`)
    characteristic.Value = packet
    Interface.emitPropertiesChanged(characteristic, { Value: packet }, [])
  }

  /** The device goes out of range. */
  drop (address: string): void {
    const entry = this.devices.get(address)
    if (entry === undefined) throw new Error(`${address} is unknown`)
    entry.device.Disconnect()
    if (entry.characteristic !== undefined) entry.characteristic.Notifying = false
  }
}
