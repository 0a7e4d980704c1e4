import path from 'node:path';
import type { Browser } from 'playwright-core';
import { SCREENSHOT_DIR, launchChromium, openConsole } from '../browser/chromium.js';
import { onboard, recipient, type Tenant } from '../utils/factories.js';
import { startStack, type Stack } from '../utils/stack.js';

/**
 * "Developers browsing /swagger/docs" as a person does it, in headless Chromium: Authorize with both halves of
 * the key pair, "Try it out" on POST /messages, Execute, and read the answer Swagger UI shows.
 */
describe('Swagger UI (headless Chromium)', () => {
  let stack: Stack;
  let browser: Browser;
  let tenant: Tenant;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startStack(), launchChromium()]);
    tenant = await onboard(stack, 'Swagger UI Co');
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('sends a message with "Try it out" on POST /messages after entering both keys in Authorize → 200 and the sent message', async () => {
    const { context, page, foreignRequests } = await openConsole(browser, stack.url);
    // Each step fails on its own within the test's time, naming what it waited for.
    page.setDefaultTimeout(5_000);
    try {
      await page.goto('/swagger/docs');
      await page.locator('button.authorize').first().click();
      for (const [scheme, value] of [
        ['accessKey', tenant.key.accessKey],
        ['secretKey', tenant.key.secretKey],
      ] as const) {
        // One form per security scheme in the dialog, each with its own input and Authorize button.
        const form = page.locator('.modal-ux .auth-container').filter({ has: page.locator('h4', { hasText: scheme }) });
        await form.locator('input').fill(value);
        // Swagger UI labels the buttons "Authorize" / "Logout" with these accessible names.
        await form.getByRole('button', { name: 'Apply credentials' }).click();
        await form.getByRole('button', { name: 'Remove authorization' }).waitFor();
      }
      await page.locator('.modal-ux').screenshot({ path: path.join(SCREENSHOT_DIR, 'swagger-01-authorized.png') });
      await page.getByRole('button', { name: 'Close' }).first().click();

      const operation = page.locator('#operations-messages-sendMessage');
      await operation.locator('.opblock-summary').click();
      await operation.getByRole('button', { name: 'Try it out' }).click();
      const to = recipient();
      const body = {
        phoneNumberId: tenant.account.phoneNumberId,
        to,
        type: 'template',
        templateName: 'hello_world',
        templateLanguage: 'en_US',
      };
      await operation.locator('textarea.body-param__text').fill(JSON.stringify(body, null, 2));
      await operation.getByRole('button', { name: 'Execute' }).click();

      const answer = operation.locator('.live-responses-table .response').first();
      await answer.waitFor({ timeout: 10_000 });
      await operation.screenshot({ path: path.join(SCREENSHOT_DIR, 'swagger-02-executed.png') });
      expect((await answer.locator('.response-col_status').innerText()).trim()).toBe('200');
      const shown = JSON.parse(await answer.locator('.response-col_description pre').first().innerText()) as {
        statusCode: number;
        data: { id: number; to: string; status: string };
      };
      expect(shown).toEqual(
        expect.objectContaining({
          statusCode: 200,
          message: 'Success',
          data: expect.objectContaining({ to, status: 'sent', templateName: 'hello_world' }),
        }),
      );
      // The request Swagger UI made carried both halves of the pair: the message exists for this key's account.
      const stored = await stack.db
        .on()
        .selectFrom('messages')
        .innerJoin('business_accounts', 'business_accounts.id', 'messages.business_account_id')
        .select(['messages.to', 'business_accounts.waba_id as wabaId'])
        .where('messages.id', '=', shown.data.id)
        .executeTakeFirstOrThrow();
      expect([stored.to, stored.wabaId]).toEqual([to, tenant.account.wabaId]);
      // Swagger UI and its assets are served by the service itself.
      expect(foreignRequests).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
