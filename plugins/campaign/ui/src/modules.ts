// The module pages the UI knows, with their paths and titles, and the groups the navigation shows
// them in: the order a campaign team works in, from organising to compliance.
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
  { id: 'media-monitor', path: '/media-monitor', title: 'Media monitor', blurb: 'Articles analysed, and how outlets cover the same story.' },
  { id: 'disinfo-warning', path: '/disinfo-warning', title: 'Disinfo warning', blurb: 'How likely a text is disinformation, and a cited counter-message.' },
  { id: 'call-intelligence', path: '/call-intelligence', title: 'Call intelligence', blurb: 'What canvassing calls say: outcomes, issues, sentiment, and their trends.' },
  { id: 'local-issues', path: '/local-issues', title: 'Local issues', blurb: 'The issues people raise, ranked by urgency, and where they raise them.' },
  { id: 'coalition-detector', path: '/coalition-detector', title: 'Coalition detector', blurb: 'Where member groups of the coalition disagree, topic by topic, with quotes.' },
  { id: 'faction-mapper', path: '/faction-mapper', title: 'Faction mapper', blurb: 'Factions of actors by their stances, and the topics of consensus and division.' },
  { id: 'regulatory-monitor', path: '/regulatory-monitor', title: 'Regulatory monitor', blurb: 'What a bill or rule requires of the campaign, by when, and at what penalty.' },
  { id: 'accountability', path: '/accountability', title: 'Accountability', blurb: 'Commitments made in speeches, the evidence on them, and what is overdue.' },
  { id: 'meetings', path: '/meetings', title: 'Meetings', blurb: 'Meeting summaries with decisions, action items and open questions.' },
  { id: 'policy-chatbot', path: '/policy-chatbot', title: 'Policy chatbot', blurb: 'Answers about our policies from the policy documents, cited, in conversations you can resume.' },
  { id: 'coaching-debate', path: '/coaching-debate', title: 'Coaching and debate', blurb: 'Practise answers: an opponent who rebuts from the record, or a coach who measures them.' },
  { id: 'empathy-simulator', path: '/empathy-simulator', title: 'Empathy simulator', blurb: 'How voter personas might react to a message, and what it leaves out for them.' },
  { id: 'campaign-copy', path: '/campaign-copy', title: 'Campaign copy', blurb: 'Texts, posts, emails, flyers and speeches written from the knowledge base, cited.' },
  { id: 'canvassing', path: '/canvassing', title: 'Canvassing', blurb: 'Door-knocking and phone scripts on the local issues, with cited talking points.' },
  { id: 'candidate-briefings', path: '/candidate-briefings', title: 'Candidate briefings', blurb: 'A briefing book on an event, place, person or topic: what the app knows, and the likely questions.' },
  { id: 'opposition-research', path: '/opposition-research', title: 'Opposition research', blurb: 'Opponents\' statements by topic and stance, their contradictions and their coverage.' },
  { id: 'multilingual', path: '/multilingual', title: 'Multilingual', blurb: 'Campaign content translated, saying plainly what was and was not translated.' },
  { id: 'question-anticipation', path: '/question-anticipation', title: 'Question anticipation', blurb: 'The questions an event will bring, why, suggested answers, and a preparation checklist.' },
  { id: 'policy-diff', path: '/policy-diff', title: 'Policy diff', blurb: 'Two versions of a policy compared clause by clause, and what changed in substance.' },
  { id: 'compliance', path: '/compliance', title: 'Compliance', blurb: 'Disclaimers, required fields, prohibited phrases and contribution limits checked; period reports.' },
  { id: 'admin', path: '/admin', title: 'Admin', blurb: 'Health of the application and who has signed in.' }
]

export interface ModuleGroup { title: string, modules: string[] }

export const MODULE_GROUPS: ModuleGroup[] = [
  { title: 'Organise', modules: ['knowledge-base', 'volunteers', 'canvassing', 'fundraising', 'meetings'] },
  { title: 'Listen', modules: ['sentiment-monitor', 'narrative-contagion', 'media-monitor', 'local-issues', 'call-intelligence', 'disinfo-warning'] },
  { title: 'Message', modules: ['campaign-copy', 'policy-chatbot', 'multilingual', 'empathy-simulator', 'question-anticipation'] },
  { title: 'Candidate', modules: ['candidate-briefings', 'coaching-debate', 'opposition-research'] },
  { title: 'Coalition', modules: ['coalition-detector', 'faction-mapper'] },
  { title: 'Policy and compliance', modules: ['policy-diff', 'regulatory-monitor', 'compliance', 'accountability'] },
  { title: 'Administration', modules: ['admin'] }
]

/** The groups with the pages among `visible`, in group order; empty groups left out. */
export function groupedPages (visible: readonly ModulePage[]): Array<{ title: string, pages: ModulePage[] }> {
  return MODULE_GROUPS
    .map(group => ({ title: group.title, pages: group.modules.map(id => visible.find(page => page.id === id)).filter(page => page !== undefined) }))
    .filter(group => group.pages.length > 0)
}
