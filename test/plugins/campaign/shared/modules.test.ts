// The module tests (../modules/) with the campaign's data in PostgreSQL and its sessions in Redis: a fresh
// database and a Redis of its own for each app a test starts. One process for all of them.
import t from 'tap'
import { onSharedBackendsToo } from '../../../support/campaign.js'

await onSharedBackendsToo(t, async () => {
  await import('../modules/accountability.test.js')
  await import('../modules/admin.test.js')
  await import('../modules/call-intelligence.test.js')
  await import('../modules/campaign-copy.test.js')
  await import('../modules/candidate-briefings.test.js')
  await import('../modules/canvassing.test.js')
  await import('../modules/coaching-debate.test.js')
  await import('../modules/coalition-detector.test.js')
  await import('../modules/compliance.test.js')
  await import('../modules/disinfo-warning.test.js')
  await import('../modules/empathy-simulator.test.js')
  await import('../modules/faction-mapper.test.js')
  await import('../modules/fundraising.test.js')
  await import('../modules/knowledge-base.test.js')
  await import('../modules/local-issues.test.js')
  await import('../modules/media-monitor.test.js')
  await import('../modules/meetings.test.js')
  await import('../modules/multilingual.test.js')
  await import('../modules/narrative-contagion.test.js')
  await import('../modules/opposition-research.test.js')
  await import('../modules/policy-chatbot.test.js')
  await import('../modules/policy-diff.test.js')
  await import('../modules/question-anticipation.test.js')
  await import('../modules/regulatory-monitor.test.js')
  await import('../modules/sentiment-monitor.test.js')
  await import('../modules/volunteers.test.js')
})
