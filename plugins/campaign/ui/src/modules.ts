// The module pages the UI knows, in navigation order, with their paths and titles.
export interface ModulePage {
  id: string
  path: string
  title: string
  blurb: string
}

export const MODULE_PAGES: ModulePage[] = [
  { id: 'knowledge-base', path: '/knowledge-base', title: 'Knowledge base', blurb: 'Search campaign documents and cite the passages.' },
  { id: 'volunteers', path: '/volunteers', title: 'Volunteers', blurb: 'The volunteer roster and the best match for an assignment.' },
  { id: 'fundraising', path: '/fundraising', title: 'Fundraising', blurb: 'Donors, donations within the limits, and solicitation drafts.' },
  { id: 'sentiment-monitor', path: '/sentiment-monitor', title: 'Sentiment monitor', blurb: 'Sentiment of the post stream over time, by source, and its spikes.' },
  { id: 'narrative-contagion', path: '/narrative-contagion', title: 'Narrative contagion', blurb: 'The stories spreading through the posts, and how fast.' },
  { id: 'admin', path: '/admin', title: 'Admin', blurb: 'Health of the application and who has signed in.' }
]
