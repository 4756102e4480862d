// The people and admin pages in headless Chromium, at 1280 px and at 390 px (one browser): staff add a
// person through the form, open their detail (household, history), import a CSV file through the file
// input (a dry run's mapping and row problems, then the import), merge a likely duplicate and download
// the Export CSV link; the search box is labelled by what the role's search looks in (staff "Name, e-mail
// or phone", readonly "Name", whose search of an e-mail address finds nobody); readonly see names without
// e-mail addresses or the household, and no Add or Import cards; a
// volunteer has no People in the navigation; an admin makes an API token whose secret is shown once,
// calls a server function with it, revokes it (then 401), and reads the audit log and its export.
// On the phone no page scrolls sideways.
import t from 'tap'
import type { Page } from 'playwright-core'
import { callServerFunction } from '../../../plugins/campaign/client.js'
import { SIZES, appInBrowser, card, moduleHidden, noSidewaysScroll, rowsOf, signIn, signOut } from '../../support/campaign-browser.js'
import { statusOf } from '../../support/campaign.js'
import { chromiumBinary } from '../../support/chromium.js'
import { requireComponent } from '../../support/component.js'
import { pollUntil } from '../../support/poll.js'


const executablePath = await requireComponent(t, 'chromium', chromiumBinary)
/** The label of the people page's search box, once list-people has said where the role's search looks. */
const searchLabel = async (page: Page): Promise<string> => {
  const label = 'label.field:has(input[name="search"]) > span'
  await pollUntil(async () => await page.textContent(label) !== 'Search', { what: 'the search box\'s label' })
  return (await page.textContent(label)) ?? ''
}
if (executablePath !== undefined) {
  t.test('staff add and import people, readonly see them without contacts, an admin manages API tokens and reads the audit log', async t => {
    const { app, user, call, browser, page } = await appInBrowser(t, executablePath)

    for (const [i, size] of SIZES.entries()) {
      await t.test(size.name, async t => {
        await page.setViewportSize({ width: size.width, height: size.height })
        await browser.clearCookies() // a size that failed half-way leaves no session behind
        const tag = `(${size.name})`
        const address = `${12 + 2 * i} Elm Street`
        const alma = `Alma Adder ${tag}`
        const almaEmail = `alma.${size.name}@example.org`
        const housemate = `Hugo Housemate ${tag}`
        await call('save-person', { name: housemate, address, postcode: '10115', city: 'Springfield' })

        // Staff: add a person, see them listed, open their detail.
        await signIn(page, app, user('staff'), '/people')
        await page.waitForSelector(`[data-testid="people"] tbody tr:has-text("${housemate}")`)
        t.equal(await searchLabel(page), 'Name, e-mail or phone', 'staff search the name, e-mail and phone')
        t.equal(await page.getByRole('searchbox', { name: 'Name, e-mail or phone' }).count(), 1, 'the box is named by its label')
        const add = card(page, 'Add a person')
        await add.locator('input[name="name"]').fill(alma)
        await add.locator('input[name="email"]').fill(almaEmail)
        await add.locator('input[name="phone"]').fill(`+1 555 010 ${1000 + i}`)
        await add.locator('input[name="address"]').fill(address.toUpperCase())
        await add.locator('input[name="city"]').fill('Springfield')
        await add.locator('input[name="postcode"]').fill('10115')
        await add.locator('input[name="tags"]').fill('housing, canvasser')
        await add.locator('input[name="consent_email"]').check()
        await add.locator('button[type="submit"]').click()
        const almaRow = `[data-testid="people"] tbody tr:has-text("${alma}")`
        await page.waitForSelector(almaRow)
        t.match(await page.textContent(almaRow), almaEmail, 'listed with the e-mail address')
        t.equal(await add.locator('input[name="name"]').inputValue(), '', 'the form is emptied')
        await page.click(`${almaRow} button.link`)
        await page.waitForSelector('[data-testid="person-detail"]')
        const facts = await page.$$eval('[data-testid="person-detail"] dt', dts => Object.fromEntries(dts.map(dt => [dt.textContent, dt.nextElementSibling?.textContent])))
        t.match(facts, { City: 'Springfield', Tags: 'housing, canvasser', 'E-mail': almaEmail, Consent: 'e-mail', Household: housemate }, 'the detail with the household at the same address')
        t.match(await rowsOf(page, '[data-testid="person-history"]'), [[/\d/, 'staff@campaign.test', 'save-person (create)']], 'the history: created with save-person')
        await noSidewaysScroll(t, page, 'a person\'s detail')

        // Import a CSV file: a dry run shows the mapping and the row problems, then the import.
        const csv = [
          'First name,Last name,Email,Phone,City,Tags,Favourite colour',
          `Ida,Importer ${tag},ida.${size.name}@example.org,,Springfield,"housing; transit",green`,
          `Bad,Row ${tag},not-an-address,,Springfield,,`,
          `Jon,Importer ${tag},jon.${size.name}@example.org,,Shelbyville,transit,`,
          `Alma,Adder ${tag},alma.other.${size.name}@example.org,,Springfield,,`
        ].join('\r\n')
        await page.selectOption('select[name="kind"]', 'volunteers')
        await page.setInputFiles('input[name="file"]', { name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) })
        await page.waitForSelector('[data-testid="import-report"]')
        t.match(await page.textContent('[data-testid="import-report"] p'), /4 rows: 0 new[\s\S]*4 with problems/, 'as volunteers, no row has a place')
        t.match(await rowsOf(page, '[data-testid="import-mapping"]'), [['First name', 'left out']], 'nor a name column')
        await page.selectOption('select[name="kind"]', 'people')
        await page.waitForSelector('[data-testid="import-report"] p:has-text("3 new")')
        t.match(await page.textContent('[data-testid="import-report"] p'), /Dry run: nothing written yet\.[\s\S]*4 rows: 3 new, 0 matched[\s\S]*1 with problems/)
        t.same(await rowsOf(page, '[data-testid="import-mapping"]'), [
          ['First name', 'first_name'], ['Last name', 'last_name'], ['Email', 'email'], ['Phone', 'phone'],
          ['City', 'city'], ['Tags', 'tags'], ['Favourite colour', 'custom:favourite_colour']
        ], 'the mapping suggested from the header')
        t.same(await page.$$eval('[data-testid="import-report"] ul.problems li', lis => lis.map(li => li.textContent)),
          ['Row 3: email "not-an-address" is not an e-mail address'], 'the bad row, by its number in the file')
        t.equal(await page.locator(`[data-testid="people"] tbody tr:has-text("Ida Importer ${tag}")`).count(), 0, 'a dry run writes nothing')
        await noSidewaysScroll(t, page, 'the import\'s dry run')
        await page.click('[data-testid="import-report"] button:has-text("Import 3 rows")')
        await page.waitForSelector('[data-testid="import-report"] p:has-text("Imported.")')
        for (const name of [`Ida Importer ${tag}`, `Jon Importer ${tag}`]) await page.waitForSelector(`[data-testid="people"] tbody tr:has-text("${name}")`)
        t.match(await page.textContent(`[data-testid="people"] tbody tr:has-text("Ida Importer ${tag}")`), /ida\.\w+@example\.org[\s\S]*Springfield[\s\S]*housing, transit/)
        t.equal(await page.locator(`[data-testid="people"] tbody tr:has-text("Row ${tag}")`).count(), 0, 'the bad row is left out')

        // The two Almas are likely one person: merged into the first.
        await page.click('button:has-text("Find duplicates")')
        const group = `[data-testid="duplicates"] li:has-text("${alma}")`
        await page.waitForSelector(group)
        t.match(await page.textContent(group), `${alma} (${almaEmail}) · ${alma} (alma.other.${size.name}@example.org)`)
        await page.click(`${group} button:has-text("Merge into the first")`)
        await page.waitForSelector(group, { state: 'detached' })
        await page.waitForSelector(`[data-testid="people"] tbody tr:has-text("alma.other.${size.name}@example.org")`, { state: 'detached' })
        t.equal(await page.locator(almaRow).count(), 1, 'one Alma is left')

        // A search finds the imported ones only.
        await page.fill('input[name="search"]', `Importer ${tag}`)
        await page.getByRole('button', { name: 'Find', exact: true }).click()
        await page.waitForSelector('[data-testid="people-total"]:text-matches("^2 people")')
        t.same(await page.$$eval('[data-testid="people"] tbody button.link', buttons => buttons.map(b => b.textContent).sort()), [`Ida Importer ${tag}`, `Jon Importer ${tag}`], 'found by name')
        await noSidewaysScroll(t, page, 'the people list after the import')

        // The Export CSV link downloads everyone (the search does not narrow it), with contact fields for staff.
        const href = await page.getAttribute('[data-testid="people-total"] a', 'href') as string
        t.equal(href, '/export/people')
        const exported = await page.request.get(new URL(href, app).href)
        t.equal(exported.status(), 200)
        t.match(exported.headers()['content-type'], /^text\/csv/)
        const text = await exported.text()
        t.match(text.split('\n')[0], /person_id,name,.*email/, 'a header with the contact fields')
        t.match(text.split('\n').find(line => line.includes(alma)), almaEmail, 'Alma with her e-mail address')
        t.match(text, `Ida Importer ${tag}`)
        await signOut(page)

        // Readonly: names, no e-mail addresses, no Add or Import; the export without contact fields.
        await signIn(page, app, user('readonly'), '/people')
        await page.waitForSelector(almaRow)
        t.equal(await searchLabel(page), 'Name', 'readonly search names only, and the box says so')
        t.equal(await page.getByRole('searchbox', { name: 'Name', exact: true }).count(), 1, 'the box is named by its label')
        await page.fill('input[name="search"]', almaEmail)
        await page.getByRole('button', { name: 'Find', exact: true }).click()
        await page.waitForSelector('[data-testid="people-total"]:text-matches("^0 people")')
        t.equal(await searchLabel(page), 'Name', 'still Name after a search')
        await page.fill('input[name="search"]', alma)
        await page.getByRole('button', { name: 'Find', exact: true }).click()
        await page.waitForSelector('[data-testid="people-total"]:text-matches("^1 people")')
        t.notMatch(await page.textContent('[data-testid="people"]'), '@', 'no e-mail address in the list')
        t.equal(await card(page, 'Add a person').count(), 0, 'no Add a person')
        t.equal(await card(page, 'Import a CSV file').count(), 0, 'no Import a CSV file')
        t.equal(await card(page, 'Likely duplicates').count(), 0, 'no Likely duplicates')
        await page.click(`${almaRow} button.link`)
        await page.waitForSelector('[data-testid="person-detail"]')
        t.notMatch(await page.textContent('[data-testid="person-detail"]'), /E-mail|@|Address|Household/, 'no contact fields or household in the detail')
        t.equal(await page.locator('[data-testid="person-history"]').count(), 0, 'no history')
        const readonlyCsv = await (await page.request.get(new URL('/export/people', app).href)).text()
        t.match(readonlyCsv, alma)
        t.notMatch(readonlyCsv, '@', 'no e-mail addresses in their export')
        await noSidewaysScroll(t, page, 'people for readonly')
        await signOut(page)

        // A volunteer: no People in the navigation.
        await moduleHidden(t, page, app, user('volunteer'), 'people')

        // An admin: an API token for readonly, its secret shown once, used from outside, revoked; the audit log.
        await signIn(page, app, user('admin'), '/admin')
        await page.waitForSelector('[data-testid="audit"] tbody tr')
        const tokens = card(page, 'API tokens')
        const name = `Reporting ${tag}`
        await tokens.locator('input[name="name"]').fill(name)
        await tokens.locator('select[name="role"]').selectOption('readonly')
        await tokens.locator('button:has-text("Create token")').click()
        await page.waitForSelector('[data-testid="new-token"] .secret')
        const secret = (await page.textContent('[data-testid="new-token"] .secret') ?? '').trim()
        t.match(secret, /^bct_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/, 'the secret is shown')
        const row = `[data-testid="tokens"] tbody tr:has-text("${name}")`
        await page.waitForSelector(row)
        t.match(await page.$$eval(`${row} td`, tds => tds.map(td => td.textContent)), [name, 'readonly', /\d/, 'admin@campaign.test', 'Revoke'])
        t.notMatch(await page.textContent('[data-testid="tokens"]'), secret.slice(-43), 'the table never shows it')
        await noSidewaysScroll(t, page, 'a new API token')
        const bearer = async (): Promise<{ people: Array<Record<string, unknown>> }> => await callServerFunction('list-people', {}, { baseUrl: app, headers: { authorization: `Bearer ${secret}` } })
        const listed = await bearer()
        t.ok(listed.people.some(p => p.name === alma), 'the token lists people')
        t.notOk(listed.people.some(p => 'email' in p), 'as readonly: without e-mail addresses')
        await page.click(`${row} button:has-text("Revoke")`)
        await page.waitForSelector(row, { state: 'detached' })
        t.equal(await statusOf(bearer()), 401, 'revoked: refused')

        await page.reload()
        await page.waitForSelector('[data-testid="audit"] tbody tr')
        t.equal(await page.locator('[data-testid="new-token"]').count(), 0, 'the secret is not shown again')
        t.notMatch(await page.textContent('body'), secret.slice(-43))
        const audit = await rowsOf(page, '[data-testid="audit"]')
        t.ok(audit.some(([, by, fn, record]) => by === 'staff@campaign.test (staff)' && fn === 'save-person' && record.startsWith('people ')), 'the staff\'s save-person')
        t.ok(audit.some(([, by, fn, record]) => by === 'admin@campaign.test (admin)' && fn === 'admin-create-api-token' && record.startsWith('api-tokens ')), 'the token made')
        t.ok(audit.some(([, , fn, , change]) => fn === 'admin-revoke-api-token' && change.startsWith('delete')), 'and revoked')
        await page.fill('input[name="table"]', 'api-tokens')
        await page.click('button:has-text("Show")')
        await page.waitForSelector('[data-testid="audit"] tbody tr:has-text("people ")', { state: 'detached' })
        const only = await rowsOf(page, '[data-testid="audit"]')
        t.ok(only.length >= 2 && only.every(([, , , record]) => record.startsWith('api-tokens ')), `only the api-tokens table (${only.length} entries)`)
        await noSidewaysScroll(t, page, 'the audit log')
        const auditHref = await page.getAttribute('a:has-text("Export CSV")', 'href') as string
        t.equal(auditHref, '/export/audit?table=api-tokens')
        const auditCsv = await page.request.get(new URL(auditHref, app).href)
        t.equal(auditCsv.status(), 200)
        const auditText = await auditCsv.text()
        t.match(auditText.split('\n').find(line => line.includes(',admin-create-api-token,')), name, 'the export has the token made')
        t.notMatch(auditText, /save-person/, 'and only that table')
        t.notMatch(auditText, secret.slice(-43), 'never its secret')
        await signOut(page)
      })
    }
  })
}
