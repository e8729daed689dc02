/** One step of stopping what a run started: a failure is printed, and the next step still runs. */
export async function cleanupStep(what: string, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    console.error(`cleanup: ${what} failed:`, err);
  }
}
