import { type MetaError, metaErrors, whatsappError } from './meta-errors.js';

export type StatusName = 'sent' | 'delivered' | 'read' | 'failed';

/** One status webhook after a send was accepted. */
export interface StatusStep {
  status: StatusName;
  /** Which configured delay (statusDelaysMs) this webhook waits for, counted from the send. */
  postAt: 'sent' | 'delivered' | 'read';
  /**
   * Seconds added to the send time for the `timestamp` field. Fixed per status (sent 0, delivered/failed 1,
   * read 2) so the event time stays ordered however the webhooks arrive, and a repeat is byte-identical.
   */
  offsetSeconds: number;
  pricing?: boolean;
  errors?: unknown[];
}

export type RecipientOutcome =
  | { kind: 'accept'; steps: StatusStep[] }
  /** A synchronous Meta error; with `firstAttemptOnly`, only the first send from a number to it fails. */
  | { kind: 'reject'; error: () => MetaError; firstAttemptOnly?: boolean }
  /** No answer for `hangMs`, then accepted like a normal send (Meta may accept what the client gave up on). */
  | { kind: 'hang' };

const sent: StatusStep = { status: 'sent', postAt: 'sent', offsetSeconds: 0, pricing: true };
const delivered: StatusStep = { status: 'delivered', postAt: 'delivered', offsetSeconds: 1, pricing: true };
const read: StatusStep = { status: 'read', postAt: 'read', offsetSeconds: 2 };

export const NORMAL_STEPS: StatusStep[] = [sent, delivered, read];

/** A marketing template to a user who stopped marketing messages: failed with 131050, asynchronously. */
export const MARKETING_STOPPED_STEPS: StatusStep[] = [
  { status: 'failed', postAt: 'sent', offsetSeconds: 1, errors: metaErrors.marketingStopped() },
];

const reEngagementErrors = [
  {
    code: 131047,
    title: 'Re-engagement message',
    message: 'Re-engagement message',
    error_data: {
      details:
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
    },
  },
];

/** Deterministic behaviour by recipient digits; the table in simulator/README.md mirrors this one. */
const OUTCOMES: Record<string, RecipientOutcome> = {
  '15550000001': {
    kind: 'reject',
    error: () =>
      whatsappError(
        400,
        131026,
        'Message undeliverable',
        'Unable to deliver message. Reasons can include: the recipient phone number is not a WhatsApp phone number.',
      ),
  },
  '15550000002': {
    kind: 'accept',
    steps: [sent, { status: 'failed', postAt: 'delivered', offsetSeconds: 1, errors: reEngagementErrors }],
  },
  '15550000003': {
    kind: 'reject',
    error: () => metaErrors.throughputReached(),
  },
  '15550000004': { kind: 'accept', steps: [sent, { ...read, pricing: true }] },
  '15550000005': {
    kind: 'accept',
    steps: [
      { ...read, postAt: 'sent' },
      delivered,
      { ...sent, postAt: 'delivered' },
      { ...delivered, postAt: 'read' },
      read,
    ],
  },
  '15550000006': { kind: 'reject', error: metaErrors.unknownError, firstAttemptOnly: true },
  '15550000007': {
    kind: 'reject',
    error: () =>
      whatsappError(
        400,
        131056,
        '(Business Account, Consumer Account) pair rate limit hit',
        'Message failed to send because there were too many messages sent from this phone number to the same ' +
          'phone number in a short period of time.',
      ),
  },
  '15550000008': { kind: 'reject', error: metaErrors.tokenExpired },
  '15550000009': {
    kind: 'reject',
    error: () =>
      whatsappError(
        400,
        368,
        'Temporarily blocked for policies violations',
        'The WhatsApp Business Account is restricted from messaging because of policy violations.',
      ),
  },
  '15550000010': { kind: 'hang' },
};

export function outcomeFor(recipientDigits: string): RecipientOutcome {
  return OUTCOMES[recipientDigits] ?? { kind: 'accept', steps: NORMAL_STEPS };
}
