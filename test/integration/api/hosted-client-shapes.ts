import { z } from 'zod';

/** GET /v1/tasks/:id/content as a hosted-service client reads it (written from its shape, not our presenter). */
const EventShape = z.object({
  seq: z.number(),
  eventType: z.string(),
  payload: z.record(z.string(), z.unknown()),
  timestamp: z.string(),
  promptId: z.string(),
});
export const ContentShape = z.object({
  id: z.string(),
  status: z.string(),
  prompts: z.array(
    z.object({
      id: z.string(),
      status: z.string(),
      userPrompt: z.string(),
      submittedAt: z.string(),
      completedAt: z.string().nullable(),
      executor: z.string(),
      model: z.string().nullable(),
      response: z.string().nullable(),
      events: z.array(EventShape).optional(),
      eventsStatus: z.string().optional(),
    }),
  ),
});
