// The channels and tones campaign copy is written for: one list for the server's schema and the page's
// choices (the page imports this module alone, nothing of the server's).
export const CHANNELS = ['sms', 'social', 'email', 'flyer', 'speech'] as const
export type Channel = typeof CHANNELS[number]
export const TONES = ['neutral', 'warm', 'urgent', 'hopeful'] as const
export type CopyTone = typeof TONES[number]
