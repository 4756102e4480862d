// The word lists of the opinion scorer (opinion.ts) beside AFINN-165: campaign words AFINN lacks or
// misreads, phrases, negators, what coverage expects of a plan or an official, burdens and goods and
// the verbs that raise or lower them, critics and the verbs that report them, hedges and contrast words.

/**
 * Scores that replace or add to AFINN-165's for single words, as political coverage uses them: words
 * AFINN lacks ("unrealistic", "dodged", "flip-flop"), and words it scores that judge nothing in a
 * campaign ("promised", "free" as in no charge, "extend", "share", "supporters").
 */
export const WORD_SCORES: Readonly<Record<string, number>> = {
  // stance words (opposition, unaffordability…)
  oppose: -2, opposes: -2, opposed: -2, opposing: -2, against: -2, resist: -1, resists: -1, scrap: -1, halt: -1,
  unaffordable: -2, overcrowded: -2, overcrowding: -2, overpriced: -2, underfunded: -2, understaffed: -2, crumbling: -2, ruinous: -2,
  expensive: -1, delays: -1, overdue: -1, backlog: -1, layoffs: -2, shortfall: -2, shortfalls: -2, overspent: -2, overspending: -2,
  unanswered: -2, canceled: -1,
  invest: 1, investing: 1, vital: 1, essential: 1, priority: 1, fairer: 1, cheaper: 1,
  // judgements of plans, officials and campaigns
  unrealistic: -2, fantasy: -2, unworkable: -2, unfunded: -2, vague: -2, dodge: -2, dodged: -2, dodges: -2, dodging: -2,
  evasion: -2, evasions: -2, evasive: -2, backlash: -2, giveaway: -2, boondoggle: -3, gimmick: -2, mismanaged: -2,
  mismanagement: -2, overruns: -2, 'flip-flop': -2, stumbled: -2, stumbles: -2, shaky: -1, troubling: -2, unconvinced: -1,
  slammed: -2, slams: -2, blasted: -2, blasts: -2, criticised: -2, criticized: -2, denounced: -2, decried: -2, lambasted: -2,
  derided: -2, panned: -2, 'so-called': -1, wasteful: -2,
  realistic: 2, credible: 2, costed: 1, bipartisan: 1, landmark: 2, milestone: 2, trustworthy: 2, energised: 2, energized: 2,
  rave: 2, raves: 2, raving: 2, honoured: 2, underserved: -1, accurate: 1, inaccurate: -2, unity: 2, practical: 1, finally: 1, slow: -1,
  slogans: -1, excuses: -2, hit: -1, hits: -1, packed: 1, patience: 2, fined: -2,
  // words AFINN scores that describe rather than judge in campaign coverage
  promise: 0, promises: 0, promised: 0, free: 0, extend: 0, share: 0, supporter: 0, supporters: 0, critic: 0, critics: 0, emergency: 0,
  authority: 0, authorities: 0, safety: 0, security: 0, grant: 0, grants: 0, approved: 0, approves: 0, absentee: 0, postponed: 0,
  launched: 0, reached: 0, adopt: 0, original: 0, party: 0, parties: 0, beat: 0, beats: 0, beating: 0
}

/** Phrases (as lower-case words) and their score; a phrase's words are read together, never alone. */
export const PHRASE_SCORES: Readonly<Record<string, number>> = {
  'over budget': -2, 'behind schedule': -2, 'under budget': 2, 'on schedule': 1, 'on time': 1, 'photo op': -2, 'wish list': -1,
  'makes sense': 2, 'got it right': 2, "can't wait": 2, 'cannot wait': 2, 'no doubt': 1, 'well run': 2, 'well-run': 2,
  'health care': 0, 'child care': 0, 'primary care': 0, 'not only': 0, 'running against': 0, 'run against': 0, 'ran against': 0,
  'ahead of schedule': 2, 'long overdue': 1, 'a hit': 2, 'big hit': 2, 'at risk': -2, 'deserve better': -2, 'deserves better': -2,
  'least afford': -2, 'raises questions': -2, 'raised questions': -2, 'raise questions': -2, 'more questions than': -2,
  'standing ovation': 3, 'declined to comment': 0, 'fire department': 0, 'fire service': 0, 'fire station': 0, 'fire chief': 0, 'margin of error': 0, 'take up': 0, 'takes up': 0, 'took up': 0, 'pick up': 0, 'picking up': 0, 'picked up': 0
}

/** Words and phrases that negate what follows them in their clause. Any word ending in n't is one too. */
export const NEGATORS = new Set(['not', 'no', 'never', 'cannot', 'cant', 'dont', 'doesnt', 'didnt', 'isnt', 'arent', 'wasnt', 'wont', 'neither', 'nor', 'without', 'nothing', 'nobody',
  'none', 'no one', 'lack', 'lacks', 'lacking', 'free of', 'yet to', 'fails to', 'failed to', 'fail to', 'short on', 'refused to', 'refuses to',
  'refuse to', 'declined to'])

/** Negators that are failures themselves: with no opinion word or expected thing to negate, they score −2 ("failed to publish the figures"). */
export const FAILURES = new Set(['lack', 'lacks', 'lacking', 'fails to', 'failed to', 'fail to', 'short on', 'refused to', 'refuses to', 'refuse to', 'declined to'])

/** Negators of a whole clause: every opinion word after them in the clause is negated ("not one of the promised units has been built"). */
export const CLAUSE_NEGATORS = new Set(['not one', 'not a single', 'none of', 'no single', 'hard to see how'])

/** Verbs of expectation: negated right after a negator, they deny the expectation ("nobody expected it to be this good"), not what follows. */
export const EXPECTATIONS = new Set(['expected', 'expects', 'expect', 'thought', 'think', 'predicted', 'predict', 'imagined', 'imagine', 'believed', 'anticipated'])

/**
 * What coverage expects of a plan or an official: neutral alone, a fault when negated or lacking
 * ("no plan", "lacks funding detail", "never consulted", "did not respond").
 */
export const EXPECTED = new Set(['plan', 'plans', 'detail', 'details', 'answer', 'answers', 'timeline', 'costing', 'costings', 'funding',
  'warning', 'notice', 'consulted', 'asked', 'informed', 'deliver', 'delivered', 'delivering', 'built', 'kept', 'respond', 'responded', 'explain',
  'explained', 'explanation', 'release', 'released', 'publish', 'published', 'money', 'correction', 'apology', 'source', 'enough', 'afford', 'evidence', 'progress', 'substance', 'strategy', 'vision', 'transparency', 'accountability'])

/** Burdens on voters: raising one is bad news, lowering it good news (as for any word AFINN scores negative). */
export const BURDENS = new Set(['tax', 'taxes', 'fee', 'fees', 'price', 'prices', 'rent', 'rents', 'bills', 'cost', 'costs',
  'commute', 'wait', 'waits', 'waiting', 'tickets', 'fines', 'deficit', 'debt', 'crime', 'crimes', 'injuries', 'homelessness', 'unemployment', 'inflation', 'traffic',
  'congestion', 'premiums', 'tuition', 'fare', 'fares', 'toll', 'tolls'])

export const INCREASES = new Set(['raise', 'raises', 'raised', 'raising', 'hike', 'hikes', 'hiked', 'increase', 'increases', 'increased',
  'increasing', 'rise', 'rises', 'rising', 'rose', 'risen', 'up', 'soar', 'soars', 'soared', 'soaring', 'skyrocket', 'skyrockets',
  'skyrocketed', 'skyrocketing', 'climb', 'climbs', 'climbed', 'balloon', 'balloons', 'ballooned', 'ballooning', 'grow', 'grows', 'grew',
  'grown', 'growing', 'double', 'doubles', 'doubled', 'triple', 'tripled', 'higher'])

export const DECREASES = new Set(['cut', 'cuts', 'cutting', 'reduce', 'reduces', 'reduced', 'reducing', 'lower', 'lowers', 'lowered',
  'lowering', 'fall', 'falls', 'fell', 'fallen', 'falling', 'drop', 'drops', 'dropped', 'decline', 'declines', 'declined', 'ease', 'eases',
  'eased', 'slash', 'slashed', 'halve', 'halved', 'down', 'fewer', 'curb', 'curbed', 'tackle', 'fight', 'fighting', 'end', 'ending', 'prevent'])

/** Goods of voters: more of one is good news, less of it bad news ("jobs grew", "cut funding"). */
export const GOODS = new Set(['job', 'jobs', 'wage', 'wages', 'pay', 'salaries', 'income', 'incomes', 'business', 'sales', 'ridership', 'turnout',
  'funding', 'service', 'services', 'homes', 'housing', 'revenue', 'investment', 'access', 'benefits', 'pensions', 'staff', 'staffing',
  'savings', 'support', 'enrolment', 'enrollment', 'attendance', 'hours'])

/** Decreases that only ever act against a burden: fighting, tackling or ending a good is no reading of it. */
export const BURDEN_FIGHTS = new Set(['tackle', 'fight', 'fighting', 'end', 'ending', 'prevent', 'curb', 'curbed', 'ease', 'eases', 'eased'])

/** Who criticises, and the verbs that report what they say: "critics say…", "opponents argue…". */
export const CRITICS = new Set(['critics', 'critic', 'opponents', 'detractors', 'skeptics', 'sceptics', 'naysayers', 'watchdogs', 'watchdog'])
export const REPORTING_VERBS = new Set(['say', 'says', 'said', 'argue', 'argues', 'argued', 'warn', 'warns', 'warned', 'contend', 'contends',
  'contended', 'claim', 'claims', 'claimed', 'note', 'notes', 'noted', 'call', 'calls', 'called', 'charge', 'charges', 'charged', 'complain',
  'complains', 'complained', 'question', 'questions', 'questioned', 'fear', 'fears', 'feared', 'worry', 'worries', 'worried', 'point',
  'insist', 'insists', 'insisted', 'allege', 'alleges', 'alleged', 'doubt', 'doubts', 'doubted'])

/**
 * Verbs that report criticism whoever voices it ("auditors questioned…", "opponents slammed…"): each
 * scores at most −2, and the praise after it in the sentence is the criticised claim, not praise.
 */
export const CRITICISM_VERBS = new Set(['criticise', 'criticize', 'criticises', 'criticizes', 'criticised', 'criticized', 'slammed', 'slams',
  'blasted', 'blasts', 'questioned', 'doubted', 'warned', 'warns', 'accused', 'accuses', 'attacked', 'condemned', 'condemns', 'denounced',
  'denounces', 'decried', 'decries', 'lambasted', 'derided', 'panned', 'complained', 'complains', 'objected', 'protested', 'disputed',
  'faulted', 'rejected', 'doubt', 'doubts'])

/** Phrases that deny what follows them, as a verb of criticism does: "no evidence the strategy has reduced crime". */
export const DENIALS = new Set(['no evidence', 'little evidence', 'no sign', 'no proof'])

/** A claim not taken at its word: the opinion word after a hedge counts for nothing ("claims to help", "touted as bold"). */
export const HEDGES = new Set(['claims to', 'claimed to', 'claim to', 'supposed to', 'so-called', 'touted', 'touts', 'supposedly', 'purportedly'])

/** Comparatives that turn "no one … than" into praise ("no one has worked harder for us than Delgado"). */
export const COMPARATIVES = new Set(['harder', 'better', 'more', 'greater', 'stronger', 'longer'])

/** Words after which a negation's clause names a topic, not what is negated ("nothing about the layoffs"). */
export const TOPIC_MARKERS = new Set(['about', 'regarding', 'concerning'])

/** Words a negation looks past for the word it negates: auxiliaries, articles, prepositions, intensifiers. */
export const NEGATION_SKIPS = new Set(['be', 'been', 'being', 'is', 'are', 'was', 'were', 'am', 'do', 'does', 'did', 'have', 'has', 'had',
  'a', 'an', 'the', 'to', 'in', 'of', 'for', 'on', 'at', 'by', 'with', 'any', 'ever', 'all', 'so', 'very', 'really', 'even', 'still', 'yet',
  'one', 'single', 'more', 'longer', 'quite', 'too', 'that', 'it', 'this'])
