/**
 * What a runtime process (the Node.js or Python server that hosts a handler) tells the process
 * that started it: one JSON object per line on file descriptor 3, apart from the Function's own
 * standard output and error. The Python server writes the same lines (python/server.py).
 */
import * as fs from 'node:fs';

/** The file descriptor of the messages. */
export const CONTROL_FD = 3;

/**
 * Private variables of the runtime process, removed from its environment before the handler
 * loads: the handler sees only the Function's variables and the controller's.
 */
export const PRIVATE_ENV = {
  /** JSON: `{ "<mountPath>": "<local folder>" }`, the Secret mounts. */
  MOUNTS: 'KYMA_SERVERLESS_LOCAL_MOUNTS',
  /** The address the server listens on. */
  HOST: 'KYMA_SERVERLESS_LOCAL_HOST',
  /** The port it listens on (0: any); `FUNC_PORT` holds the port the Function is served on. */
  PORT: 'KYMA_SERVERLESS_LOCAL_PORT',
  /** The Serverless release whose contract the Function runs with, for the runtime's notes. */
  RELEASE: 'KYMA_SERVERLESS_LOCAL_RELEASE',
} as const;

/** A message of a runtime process. */
export type ControlMessage =
  /** The server listens. */
  | { readonly type: 'listening'; readonly port: number }
  /** The handler loaded, and `main` is a function. */
  | { readonly type: 'loaded' }
  /** The handler did not load, or exports no `main`; the process keeps answering 500 (as the images do). */
  | { readonly type: 'load-failed'; readonly message: string }
  /** The server could not listen. */
  | { readonly type: 'listen-failed'; readonly code: string; readonly message: string }
  /** A request ended; for the log of `run`. */
  | { readonly type: 'request'; readonly method: string; readonly path: string; readonly status: number; readonly ms: number }
  /** What the runtime did differently from what the handler's author may expect, explained. */
  | { readonly type: 'note'; readonly message: string };

/** Sends a message to the parent, when there is one listening on the descriptor. */
export function sendControl(message: ControlMessage): void {
  try {
    fs.writeSync(CONTROL_FD, `${JSON.stringify(message)}\n`);
  } catch {
    // Started without the descriptor (by hand): there is no one to tell.
  }
}
