// Icons drawn as inline SVG in the text colour, so they look the same on every device: no emoji font
// is needed. Each is decorative (aria-hidden); the control around it carries the label.

const PATHS = {
  'thumb-up': 'M7 10v11M7 10l4-8a3 3 0 0 1 3 3v4h5.5a2 2 0 0 1 2 2.3l-1.3 8a2 2 0 0 1-2 1.7H7M7 21H4a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1h3',
  'thumb-down': 'M17 14V3M17 14l-4 8a3 3 0 0 1-3-3v-4H4.5a2 2 0 0 1-2-2.3l1.3-8a2 2 0 0 1 2-1.7H17M17 3h3a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1h-3',
  menu: 'M3 6h18M3 12h18M3 18h18',
  close: 'M5 5l14 14M19 5L5 19'
} as const

export type IconName = keyof typeof PATHS

export function Icon ({ name }: { name: IconName }) {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false" data-icon={name}
      fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
      <path d={PATHS[name]} />
    </svg>
  )
}
