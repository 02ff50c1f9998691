import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';

export const BOARD_PATH = '/admin/queues';

/**
 * Bull Board at /admin/queues, read-only: every change to a queue goes through taxsync's own
 * tools, which obey coalescing and the VAT ledger and write the audit log. Besides the board's own
 * read-only mode, anything but GET is refused here, so a future board route cannot slip through.
 */
export async function registerBoard(scope: FastifyInstance, queues: readonly Queue[]): Promise<void> {
  const serverAdapter = new FastifyAdapter().setBasePath(BOARD_PATH);
  createBullBoard({
    queues: queues.map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'taxsync' } },
  });
  await scope.register(async (board) => {
    board.addHook('onRequest', async (request, reply) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        return reply.code(405).send({ error: 'read_only', message: 'the queue board is read-only: use the dead-letter page or `taxsync dlq`' });
      }
    });
    await board.register(serverAdapter.registerPlugin(), { prefix: '/queues' });
  });
}
