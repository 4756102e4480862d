// Example inputs of the policy diff page's "Load an example" button, also the fixtures of the tests that
// check what compare-policies makes of them.

/** Two versions of a policy: one clause strengthened with a new amount, one reversed, one turned against, one added, one removed, one kept. */
export const POLICY_A = `SECTION 1. Contributions.
(a) A committee may disclose every contribution over $200 to the Elections Board.
(b) Reports are filed within 30 days after the election.

SECTION 2. Volunteers.
Volunteers may canvass on weekends.

SECTION 3. Transit.
We support expanding the bus network.

SECTION 5. Events.
The campaign will hold a rally every month in the park.`

export const POLICY_B = `SECTION 1. Contributions.
(a) A committee must disclose every contribution over $500 to the Elections Board.
(b) Reports are filed within 30 days after the election.

SECTION 2. Volunteers.
Volunteers may not canvass on weekends.

SECTION 3. Transit.
We oppose expanding the bus network.

SECTION 4. Data.
The campaign shall delete voter data after the election.`
