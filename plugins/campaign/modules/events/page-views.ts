// How often each public page (an event's, a form's) was opened, and what it gave: GETs are counted
// in memory (a Map increment per view, nothing written per request) and added to the store's totals
// every minute and when the app listener closes (before the store does), in a transaction per page, so instances sharing a store sum
// their counts; a total read adds this instance's views not yet written. The sign-ups are the public
// RSVPs of an event and the signatures of a form; conversion is sign-ups per view.
import type { FastifyPluginAsync } from 'fastify'
import type { CampaignStore } from '../../module-kit.js'
import type { EventBook } from './event-book.js'
import type { PublicForms } from './public-forms.js'
import type { PublicRsvps } from './public-rsvp.js'

const VIEWS = 'public-page-views'

/** A public page's figures, as public-page-stats and its export give them. */
export interface PageStats {
  page: 'event' | 'form'
  id: string
  title: string
  path: string
  published: boolean
  views: number
  signups: number
  /** Sign-ups per view, rounded to 4 places; null before the first view. */
  conversion: number | null
}

export class PageViews {
  readonly #store: CampaignStore
  readonly #pending = new Map<string, number>()

  constructor (store: CampaignStore) {
    this.#store = store
  }

  /** Count one view of the page `key` (`event:{id}` or `form:{id}`). */
  view (key: string): void {
    this.#pending.set(key, (this.#pending.get(key) ?? 0) + 1)
  }

  /** Add the views counted here to the store's totals. */
  async flush (): Promise<void> {
    const counted = [...this.#pending]
    this.#pending.clear()
    for (const [key, views] of counted) {
      await this.#store.transaction(`${VIEWS}:${key}`, async tx => {
        const table = tx.table<number>(VIEWS)
        await table.put(key, (await table.get(key) ?? 0) + views)
      })
    }
  }

  /** Every page's views: the store's totals and this instance's not yet written. */
  async totals (): Promise<Map<string, number>> {
    const totals = new Map((await this.#store.table<number>(VIEWS).list()).map(({ key, value }) => [key, value]))
    for (const [key, views] of this.#pending) totals.set(key, (totals.get(key) ?? 0) + views)
    return totals
  }
}

/** A route plugin that adds the views not yet written when the listener closes (the store is still open then). */
export function flushViewsOnClose (views: PageViews, failed: (err: unknown) => void): FastifyPluginAsync {
  return async app => {
    app.addHook('onClose', async () => { await views.flush().catch(failed) })
  }
}

/** Every published-once event's and every form's views, sign-ups and conversion. */
export async function pageStats (book: EventBook, forms: PublicForms, rsvps: PublicRsvps, views: PageViews): Promise<PageStats[]> {
  const totals = await views.totals()
  const signups = await rsvps.countsByEvent()
  const row = (page: PageStats['page'], id: string, title: string, path: string, published: boolean, signed: number): PageStats => {
    const seen = totals.get(`${page}:${id}`) ?? 0
    return { page, id, title, path, published, views: seen, signups: signed, conversion: seen === 0 ? null : Math.round(signed / seen * 10_000) / 10_000 }
  }
  return [
    ...(await book.events()).filter(e => e.slug !== undefined).map(e => row('event', e.event_id, e.title, `/e/${e.slug as string}`, e.published === true, signups.get(e.event_id) ?? 0)),
    ...(await forms.forms()).map(f => row('form', f.form_id, f.title, `/f/${f.slug}`, f.published, f.signatures))
  ]
}

declare module '../../module-kit.js' {
  interface ModuleKit {
    /** Every public page's views, sign-ups and conversion. */
    pageStats: () => Promise<PageStats[]>
  }
}
