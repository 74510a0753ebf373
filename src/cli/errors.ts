/**
 * The error of a command that a user can act on: every command throws it, and the program prints
 * its message alone and exits with its code.
 */

/** A problem a user can act on: printed as it is, without a stack trace. */
export class CliError extends Error {
  constructor(message: string, public readonly exitCode = 1) {
    super(message);
    this.name = 'CliError';
  }
}
