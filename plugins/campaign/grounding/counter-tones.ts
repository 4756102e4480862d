// The tones a counter-message is written in: one list for the server's schema and the page's choices
// (the page imports this module alone, nothing of the server's).
export const COUNTER_TONES = ['neutral', 'warm', 'firm'] as const
export type CounterTone = typeof COUNTER_TONES[number]
