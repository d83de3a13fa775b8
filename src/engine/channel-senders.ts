/**
 * How the engine reaches the providers. The engine sits below the integrations and providers
 * features, so it declares what it needs here and app.ts hands in the implementation
 * (integrations/senders.ts). A sender never throws for a provider's failure: it answers with one.
 */
export interface ChannelSenders {
  /** The environment's email integration (its primary active one, else its newest active one). */
  email(environmentId: string): Promise<EmailSender | undefined>;
  /** The environment's active chat integrations, newest first. */
  chat(environmentId: string): Promise<ChatSender[]>;
}

export interface Sender {
  integrationId: string;
  /** The integration's identifier (what a subscriber's channel may name). */
  identifier: string;
  providerId: string;
}

export interface OutgoingEmail {
  to: string;
  subject: string;
  html: string;
  /** The step's sender name; empty: the integration's. */
  senderName: string;
  /** Names the message for the Message-ID header: a resend of the same job's email carries the same one. */
  deliveryKey: string;
}

export interface EmailSender extends Sender {
  send(email: OutgoingEmail): Promise<DeliveryResult>;
}

export interface ChatSender extends Sender {
  send(webhookUrl: string, text: string): Promise<DeliveryResult>;
}

export type DeliveryResult =
  | { ok: true; messageId: string; response: string }
  | {
      ok: false;
      /** Whether trying again later can succeed; false: the provider refused this message for good. */
      retryable: boolean;
      error: string;
      response: string;
    };
