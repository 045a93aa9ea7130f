import pg from 'pg';

/**
 * The servers of the tests in test/cluster, named by the scripts that start them. A test there
 * fails, not skips, when its server is missing: it says which script to run it under.
 */
const STARTED_BY = {
  MEMGATE_TEST_PRIMARY_URL: 'scripts/with-cluster.sh',
  MEMGATE_TEST_REPLICA_URL: 'scripts/with-cluster.sh',
  MEMGATE_TEST_OTHER_URL: 'scripts/with-cluster.sh',
  MEMGATE_TEST_PATRONI_URL: 'scripts/with-patroni.sh',
  MEMGATE_TEST_PATRONI_REPLICAS_URL: 'scripts/with-patroni.sh',
  MEMGATE_TEST_PATRONI_REST: 'scripts/with-patroni.sh',
  MEMGATE_TEST_PATRONI_CTL: 'scripts/with-patroni.sh',
  MEMGATE_TEST_PATRONI_DIR: 'scripts/with-patroni.sh',
} as const;

export type ClusterVariable = keyof typeof STARTED_BY;

/** The value of `name`, or an error naming the script that sets it. */
export function clusterEnv(name: ClusterVariable): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: run this test under ${STARTED_BY[name]} ` +
        `(\`${STARTED_BY[name]} npm run -s test:cluster -- test/cluster/<file>\`).`,
    );
  }
  return value;
}

/**
 * A file's set-up, run once by the first test that awaits it and shared by the rest. Unlike a
 * `beforeAll`, whose failure leaves the tests reported as skipped, a failed set-up (a missing
 * variable, say) fails every test that needs it, with its message.
 */
export function sharedSetup<T>(setUp: () => Promise<T>): {
  get(): Promise<T>;
  ifStarted(): Promise<T | undefined>;
} {
  let started: Promise<T> | undefined;
  return {
    get: () => {
      started ??= setUp();
      return started;
    },
    ifStarted: async () => (started ? started.catch(() => undefined) : undefined),
  };
}

/** `work` on a fresh connection to `url`, closed afterwards. */
export async function withClient<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
