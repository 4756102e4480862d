// USB serial devices found without naming them: udev's links in /dev/serial/by-id (one per USB serial
// adapter or CDC-ACM device, stable across replugging), else the /dev/ttyACM* and /dev/ttyUSB* nodes.
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'

export const USB_BY_ID = '/dev/serial/by-id'

/** The USB serial devices present now, as paths to open. */
export function usbSerialDevices (dir = USB_BY_ID): string[] {
  if (existsSync(dir)) return readdirSync(dir).sort().map(name => join(dir, name))
  if (dir !== USB_BY_ID) return []
  return readdirSync('/dev').filter(name => /^tty(ACM|USB)\d+$/.test(name)).sort().map(name => join('/dev', name))
}
