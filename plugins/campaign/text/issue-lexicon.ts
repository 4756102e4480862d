// The campaign's issue lexicon, shared by every module that tags text with local or policy issues
// (call intelligence, local issues…): each issue with the words and phrases that raise it, matched on
// the engine's terms (lower-cased runs of letters and digits, stop words dropped), so no twin lists.
import { tokenize } from './bm25.js'

/** Issue → cue words and phrases. Plural forms are listed: matching is exact on terms, with no stemming. */
export const ISSUE_LEXICON: Readonly<Record<string, readonly string[]>> = {
  housing: ['housing', 'rent', 'rents', 'rental', 'renters', 'tenant', 'tenants', 'landlord', 'landlords', 'eviction', 'evictions',
    'evicted', 'mortgage', 'mortgages', 'homeless', 'homelessness', 'apartment', 'apartments', 'zoning', 'affordable homes'],
  'cost of living': ['cost of living', 'inflation', 'prices', 'groceries', 'grocery', 'bills', 'expensive', 'paycheck', 'utility bills'],
  'jobs and economy': ['jobs', 'job', 'unemployment', 'unemployed', 'wages', 'wage', 'minimum wage', 'employment', 'economy', 'economic',
    'layoffs', 'laid off', 'small business', 'small businesses', 'workers'],
  taxes: ['tax', 'taxes', 'taxation', 'property tax', 'taxpayer', 'taxpayers', 'levy'],
  'public safety': ['crime', 'crimes', 'police', 'policing', 'public safety', 'violence', 'violent', 'shooting', 'shootings', 'theft',
    'robbery', 'burglary', 'break ins', 'drugs', 'overdose', 'overdoses'],
  education: ['school', 'schools', 'education', 'teacher', 'teachers', 'student', 'students', 'classroom', 'classrooms', 'tuition',
    'college', 'university', 'kindergarten'],
  'health care': ['healthcare', 'health care', 'hospital', 'hospitals', 'clinic', 'clinics', 'doctor', 'doctors', 'nurse', 'nurses',
    'medicare', 'medicaid', 'prescription', 'prescriptions', 'mental health', 'health insurance'],
  transportation: ['transit', 'bus', 'buses', 'train', 'trains', 'subway', 'traffic', 'road', 'roads', 'pothole', 'potholes', 'commute',
    'parking', 'bike lanes', 'highway', 'sidewalk', 'sidewalks'],
  infrastructure: ['infrastructure', 'bridge', 'bridges', 'water', 'sewer', 'sewers', 'broadband', 'internet', 'streetlights', 'power outages'],
  environment: ['climate', 'environment', 'environmental', 'pollution', 'emissions', 'clean energy', 'solar', 'recycling', 'flooding',
    'floods', 'air quality', 'park', 'parks', 'trees'],
  immigration: ['immigration', 'immigrant', 'immigrants', 'border', 'asylum', 'refugee', 'refugees', 'deportation', 'deportations'],
  childcare: ['childcare', 'child care', 'daycare', 'preschool', 'pre k'],
  seniors: ['seniors', 'pension', 'pensions', 'retirement', 'retirees', 'social security', 'nursing home', 'nursing homes']
}

export interface IssueMention {
  issue: string
  /** Cue occurrences in the text. */
  count: number
  /** The distinct cues found, as listed in the lexicon. */
  cues: string[]
}

/** Each cue of `lexicon` as its term sequence, longest first. */
const cueSequences = (lexicon: Readonly<Record<string, readonly string[]>>): Array<{ issue: string, cue: string, terms: string[] }> => Object.entries(lexicon)
  .flatMap(([issue, cues]) => cues.map(cue => ({ issue, cue, terms: tokenize(cue) })))
  .filter(c => c.terms.length > 0)
  .sort((a, b) => b.terms.length - a.terms.length)

/**
 * A finder of the topics of `lexicon` (topic → cue words and phrases) in a text: every occurrence of
 * a cue's term sequence counts once, a longer cue consuming its terms first ("property tax" is one
 * cue, not also "tax"). Sorted by count, then name.
 */
export function cueMatcher (lexicon: Readonly<Record<string, readonly string[]>>): (text: string) => IssueMention[] {
  const cues = cueSequences(lexicon)
  return text => {
    const terms = tokenize(text)
    const used = new Array<boolean>(terms.length).fill(false)
    const found = new Map<string, IssueMention>()
    for (const { issue, cue, terms: cueTerms } of cues) {
      for (let i = 0; i + cueTerms.length <= terms.length; i++) {
        if (!cueTerms.every((term, j) => terms[i + j] === term && !used[i + j])) continue
        for (let j = 0; j < cueTerms.length; j++) used[i + j] = true
        const mention = found.get(issue) ?? { issue, count: 0, cues: [] }
        mention.count++
        if (!mention.cues.includes(cue)) mention.cues.push(cue)
        found.set(issue, mention)
      }
    }
    return [...found.values()].sort((a, b) => b.count - a.count || a.issue.localeCompare(b.issue))
  }
}

/** The issues of the campaign's lexicon a text raises (see `cueMatcher`). */
export const findIssues: (text: string) => IssueMention[] = cueMatcher(ISSUE_LEXICON)
