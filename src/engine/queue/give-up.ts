import type { Logger } from "pino";
import { errorMessage, type FailedHandler, type FailedTask } from "./port.ts";

/** Logs a given-up task and tells the hook; a failing hook is logged, never retried. */
export async function reportGiveUp(
  logger: Logger,
  onFailed: FailedHandler | undefined,
  failed: FailedTask,
  error: unknown,
): Promise<void> {
  const fields = { err: error, taskId: failed.taskId, task: failed.task, attempts: failed.attempts };
  logger.error(fields, "job queue: task given up after its last attempt");
  if (!onFailed) return;
  try {
    await onFailed(failed, error);
  } catch (hookError) {
    logger.error(
      { ...fields, err: hookError, taskError: errorMessage(error) },
      "job queue: the give-up hook failed; the task is removed all the same",
    );
  }
}
