// The channels a compliance check reads a text for: one list for the server's rules and the page's
// choices (the page imports this module alone, nothing of the server's).
export const CHANNELS = ['ad', 'mailer', 'email', 'post'] as const
export type Channel = typeof CHANNELS[number]
