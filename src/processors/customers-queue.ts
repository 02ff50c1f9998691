import type { RecordHandler } from './types.js';

/** The customers queue holds customer and exemption records: each goes to its own handler. */
export function customersQueueHandler(handlers: { customer: RecordHandler; exemption: RecordHandler }): RecordHandler {
  const { customer, exemption } = handlers;
  return (event, ctx) => (ctx.record.kind === 'exemption' ? exemption(event, ctx) : customer(event, ctx));
}
