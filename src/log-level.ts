/**
 * Log levels, shared by the controller's configuration and our webhook server.
 */

/** Log levels, lowest first; the values are those the controller and the webhook read. */
export enum LogLevel {
  DEBUG = 'debug',
  INFO = 'info',
  WARN = 'warn',
  ERROR = 'error',
}
