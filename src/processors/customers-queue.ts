import type { RecordHandler } from './types.js';

/**
 * The customers queue holds customer and exemption records: each goes to its own handler. An
 * exemption record never holds customer events, so the customer handler's sendsHeldEvent holds
 * for the queue as a whole (the job's read does sending()'s work for customer upserts).
 */
export function customersQueueHandler(handlers: { customer: RecordHandler; exemption: RecordHandler }): RecordHandler {
  const { customer, exemption } = handlers;
  const handle: RecordHandler = (event, ctx) => (ctx.record.kind === 'exemption' ? exemption(event, ctx) : customer(event, ctx));
  return customer.sendsHeldEvent === undefined ? handle : Object.assign(handle, { sendsHeldEvent: customer.sendsHeldEvent });
}
