/** What a mail message shows in listings; its text and HTML carry tokens and travel sealed. */
export interface MailEnvelope {
  to: string;
  subject: string;
  /** Template name, for logs and the operator listing (bodies are never logged). */
  template: string;
}

export interface MailBody {
  text: string;
  html: string;
}

/**
 * The typed map of outbox topics: topic name → the message's `payload` (stored as JSON) and, where it carries
 * secrets, its `secret` part (stored sealed with the SecretBox and cleared once sent). `Outbox.enqueue` and
 * `Outbox.handle` are typed by it, so a message cannot be written with another topic's shape.
 *
 * The platform declares its own topics here. A library declares its topics in its own file by augmenting this
 * interface (the platform imports nothing from above):
 *
 *   declare module '#platform' {
 *     interface OutboxTopics {
 *       'webhook.deliver': { payload: WebhookDeliveryMessage };
 *     }
 *   }
 */
export interface OutboxTopics {
  'mail.send': { payload: MailEnvelope; secret: MailBody };
}

export type OutboxTopic = keyof OutboxTopics;

export type OutboxPayload<T extends OutboxTopic> = OutboxTopics[T]['payload'];

export type OutboxSecret<T extends OutboxTopic> = OutboxTopics[T] extends { secret: infer S } ? S : never;
