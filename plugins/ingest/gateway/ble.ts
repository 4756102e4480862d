// BLE devices through BlueZ on the system D-Bus (dbus-next): the gateway scans on the first adapter
// for devices that advertise the Berth GATT service, connects to each, subscribes to its chunks
// characteristic and hands every notification (a frame, or a piece of one) to the caller.
// A device that goes away is connected again when it is seen again. Where there is no BlueZ or no
// adapter, `startBle` says so in one line and the gateway goes on with its serial lines.
import dbus from 'dbus-next'

/** The GATT service a Berth device offers, and its characteristic that notifies frames. */
export const BERTH_BLE_SERVICE = 'b3a70001-2d6c-4c1e-9a51-7f0e5b1e7a00'
export const BERTH_BLE_CHUNKS = 'b3a70002-2d6c-4c1e-9a51-7f0e5b1e7a00'

const BLUEZ = 'org.bluez'
const ADAPTER = 'org.bluez.Adapter1'
const DEVICE = 'org.bluez.Device1'
const CHARACTERISTIC = 'org.bluez.GattCharacteristic1'
const PROPERTIES = 'org.freedesktop.DBus.Properties'
/** How often the device list is read again (discovered devices, devices that came back). */
const REFRESH_MS = 2000
/** How long BlueZ may take to answer, and a connected device to resolve its services. */
const ANSWER_MS = 10_000

type Objects = Record<string, Record<string, Record<string, dbus.Variant>>>

export interface BleBridge {
  stop(): Promise<void>
}

export interface BleHandlers {
  /** One notification of a device's chunks characteristic. */
  packet(address: string, bytes: Buffer): void
  log(line: string): void
}

/** Start bridging; resolves with undefined (after one line of explanation) where BLE cannot be used. */
export async function startBle (handlers: BleHandlers): Promise<BleBridge | undefined> {
  const bus = dbus.systemBus()
  // A bus that cannot be reached (no socket, refused) reports it as an 'error' event, not as a failed call.
  const broken = new Promise<never>((_resolve, reject) => { bus.on('error', reject) })
  broken.catch(() => {})
  try {
    const root = await answered(bus.getProxyObject(BLUEZ, '/'), broken)
    const objects = await managedObjects(root, broken)
    const adapter = Object.keys(objects).find(path => ADAPTER in objects[path])
    if (adapter === undefined) {
      handlers.log('BLE: BlueZ lists no adapter on this host; serial lines only')
      bus.disconnect()
      return undefined
    }
    const bridge = new Bridge(bus, root, adapter, handlers)
    await bridge.start()
    return bridge
  } catch (err) {
    handlers.log(`BLE: cannot use BlueZ on the system bus (${(err as Error).message}); serial lines only`)
    bus.disconnect()
    return undefined
  }
}

class Bridge implements BleBridge {
  /** Devices connected (or being connected), by object path. */
  readonly #devices = new Map<string, { address: string, close(): Promise<void> }>()
  #timer: NodeJS.Timeout | undefined
  #stopping = false

  constructor (readonly bus: dbus.MessageBus, readonly root: dbus.ProxyObject, readonly adapter: string, readonly handlers: BleHandlers) {}

  async start (): Promise<void> {
    const adapter = (await this.bus.getProxyObject(BLUEZ, this.adapter)).getInterface(ADAPTER)
    await adapter.SetDiscoveryFilter({ UUIDs: new dbus.Variant('as', [BERTH_BLE_SERVICE]), Transport: new dbus.Variant('s', 'le') })
    await adapter.StartDiscovery()
    this.handlers.log(`BLE: scanning on ${this.adapter.split('/').at(-1) ?? this.adapter} for devices offering the Berth service`)
    await this.#refresh()
  }

  async #refresh (): Promise<void> {
    if (this.#stopping) return
    try {
      const objects = await managedObjects(this.root)
      for (const [path, interfaces] of Object.entries(objects)) {
        const device = interfaces[DEVICE]
        if (device === undefined || this.#devices.has(path) || device.Adapter?.value !== this.adapter) continue
        const uuids = (device.UUIDs?.value ?? []) as string[]
        if (!uuids.map(uuid => uuid.toLowerCase()).includes(BERTH_BLE_SERVICE)) continue
        void this.#connect(path, String(device.Address?.value ?? path))
      }
    } catch (err) {
      this.handlers.log(`BLE: cannot list devices (${(err as Error).message})`)
    }
    if (!this.#stopping) this.#timer = setTimeout(() => { void this.#refresh() }, REFRESH_MS)
  }

  async #connect (path: string, address: string): Promise<void> {
    const entry = { address, close: async () => {} }
    this.#devices.set(path, entry)
    /** Listeners on this connection's proxies, removed when it ends: a device that comes back is subscribed anew, and must not be heard twice. */
    const unsubscribe: Array<() => void> = []
    try {
      const object = await this.bus.getProxyObject(BLUEZ, path)
      const device = object.getInterface(DEVICE)
      const deviceProps = object.getInterface(PROPERTIES)
      const lost = (): void => {
        if (this.#devices.get(path) !== entry) return
        this.#devices.delete(path)
        for (const off of unsubscribe) off()
        this.handlers.log(`BLE ${address}: disconnected`)
      }
      const onDevice = (iface: string, changed: Record<string, dbus.Variant>): void => {
        if (iface === DEVICE && changed.Connected?.value === false) lost()
      }
      deviceProps.on('PropertiesChanged', onDevice)
      unsubscribe.push(() => { deviceProps.off('PropertiesChanged', onDevice) })
      await device.Connect()
      const characteristic = await this.#chunksCharacteristic(path)
      const charObject = await this.bus.getProxyObject(BLUEZ, characteristic)
      const charProps = charObject.getInterface(PROPERTIES)
      const onValue = (iface: string, changed: Record<string, dbus.Variant>): void => {
        const value = changed.Value?.value as Buffer | number[] | undefined
        if (iface === CHARACTERISTIC && value !== undefined) this.handlers.packet(address, Buffer.from(value))
      }
      charProps.on('PropertiesChanged', onValue)
      unsubscribe.push(() => { charProps.off('PropertiesChanged', onValue) })
      const gatt = charObject.getInterface(CHARACTERISTIC)
      await gatt.StartNotify()
      entry.close = async () => {
        await gatt.StopNotify().catch(() => {})
        await device.Disconnect().catch(() => {})
      }
      this.handlers.log(`BLE ${address}: connected, receiving frames`)
    } catch (err) {
      this.handlers.log(`BLE ${address}: cannot subscribe (${(err as Error).message}); trying again when it is seen again`)
      for (const off of unsubscribe) off()
      if (this.#devices.get(path) === entry) this.#devices.delete(path)
    }
  }

  /** The object path of the chunks characteristic under a connected device, once its services resolve. */
  async #chunksCharacteristic (device: string): Promise<string> {
    const deadline = Date.now() + ANSWER_MS
    for (;;) {
      const objects = await managedObjects(this.root)
      const found = Object.keys(objects).find(path => path.startsWith(`${device}/`) &&
        String(objects[path][CHARACTERISTIC]?.UUID?.value ?? '').toLowerCase() === BERTH_BLE_CHUNKS)
      if (found !== undefined) return found
      if (objects[device]?.[DEVICE]?.ServicesResolved?.value === true) throw new Error('the device has no Berth chunks characteristic')
      if (Date.now() > deadline) throw new Error(`its services did not resolve within ${ANSWER_MS / 1000} s`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }

  async stop (): Promise<void> {
    this.#stopping = true
    clearTimeout(this.#timer)
    await Promise.allSettled([...this.#devices.values()].map(async device => { await device.close() }))
    this.#devices.clear()
    const adapter = await this.bus.getProxyObject(BLUEZ, this.adapter).catch(() => undefined)
    await adapter?.getInterface(ADAPTER).StopDiscovery().catch(() => {})
    this.bus.disconnect()
  }
}

async function managedObjects (root: dbus.ProxyObject, broken?: Promise<never>): Promise<Objects> {
  const manager = root.getInterface('org.freedesktop.DBus.ObjectManager')
  return await answered(manager.GetManagedObjects() as Promise<Objects>, broken)
}

/** A call's answer or failure within ANSWER_MS, or the bus's own failure if it comes first. */
async function answered<T> (call: Promise<T>, broken?: Promise<never>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const limit = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`no answer within ${ANSWER_MS / 1000} s`)) }, ANSWER_MS)
  })
  try {
    return await Promise.race(broken === undefined ? [call, limit] : [call, limit, broken])
  } finally {
    clearTimeout(timer)
  }
}
