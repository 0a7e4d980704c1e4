import type { SimPhoneNumber } from './fixture.js';
import { unixSeconds } from './meta-json.js';
import type { StatusStep } from './outcomes.js';
import type { Scheduler } from './scheduler.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';
import { messagesWebhook, userIdFor } from './payloads/webhooks.js';

/** Business-scoped user ids on automatic statuses (SimulatorOptions.userIds). */
export type UserIdMode = 'off' | 'alongside' | 'only';

export interface StatusDelays {
  sent: number;
  delivered: number;
  read: number;
}

export interface AcceptedMessage {
  wabaId: string;
  phone: SimPhoneNumber;
  wamid: string;
  /** The phone digits sent to; undefined for a send to a business-scoped user id. */
  recipientId?: string;
  /** The BSUID sent to (Meta's `recipient`): its statuses carry `recipient_user_id` and no `recipient_id`. */
  recipientUserId?: string;
  /** Template category (lower case) for pricing; undefined for a free-form message in the service window (`service`). */
  templateCategory?: string;
  bizOpaqueCallbackData?: string;
}

/** Plays a message's status steps as separate webhooks, in the step order, at the configured delays. */
export class StatusEmitter {
  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly scheduler: Scheduler,
    private readonly delays: StatusDelays,
    private readonly enabled: boolean,
    private readonly userIds: UserIdMode = 'off',
  ) {}

  /** Fire and forget: the send response must never wait for webhook delivery. */
  start(message: AcceptedMessage, steps: StatusStep[]): void {
    if (this.enabled) void this.run(message, steps);
  }

  private async run(message: AcceptedMessage, steps: StatusStep[]): Promise<void> {
    const acceptedAt = Date.now();
    for (const step of steps) {
      // Each step waits for its delay and for the previous step's first attempt, so the arrival order
      // is the step order (retries of a refused webhook can still arrive later, as with Meta).
      const elapsed = await this.scheduler.sleep(acceptedAt + this.delays[step.postAt] - Date.now());
      if (!elapsed || !this.dispatcher.receiverUrl) return;
      // A send to a BSUID: its statuses name the user by it alone, whatever the mode.
      const mode = message.recipientUserId !== undefined ? 'only' : this.userIds;
      const status = statusObject(message, step, unixSeconds(acceptedAt) + step.offsetSeconds, mode);
      // Meta adds the user's contact to BSUID-era statuses, except failed ones.
      const contacts = mode === 'off' || step.status === 'failed' ? undefined : [contactOf(message, mode)];
      await this.dispatcher.deliver(
        messagesWebhook(message.wabaId, message.phone, { ...(contacts ? { contacts } : {}), statuses: [status] }),
      );
    }
  }
}

function contactOf(message: AcceptedMessage, mode: UserIdMode): Record<string, unknown> {
  return { ...(mode === 'alongside' ? { wa_id: message.recipientId } : {}), user_id: userIdOf(message) };
}

const userIdOf = (message: AcceptedMessage): string => message.recipientUserId ?? userIdFor(message.recipientId!);

function statusObject(
  message: AcceptedMessage,
  step: StatusStep,
  timestamp: number,
  userIds: UserIdMode,
): Record<string, unknown> {
  // Since 2026-10-01 Meta bills service (non-template) messages too: pricing type regular, category service.
  const pricing = {
    billable: true,
    pricing_model: 'PMP',
    type: 'regular',
    category: message.templateCategory ?? 'service',
  };
  return {
    id: message.wamid,
    status: step.status,
    timestamp: String(timestamp),
    ...(userIds === 'only' ? {} : { recipient_id: message.recipientId }),
    ...(userIds === 'off' ? {} : { recipient_user_id: userIdOf(message) }),
    ...(step.pricing ? { pricing } : {}),
    ...(message.bizOpaqueCallbackData !== undefined ? { biz_opaque_callback_data: message.bizOpaqueCallbackData } : {}),
    ...(step.errors ? { errors: step.errors } : {}),
  };
}
