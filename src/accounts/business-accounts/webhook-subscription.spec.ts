import { listsApp } from './webhook-subscription.js';

const app = (id: string) => ({
  whatsapp_business_api_data: { id, link: `https://www.facebook.com/games/?app_id=${id}`, name: `App ${id}` },
});

describe('listsApp (is the subscription there after POST subscribed_apps?)', () => {
  it('with WHATSAPP_APP_ID set, only when that very app is listed', () => {
    expect(listsApp([app('111'), app('222')], '222')).toBe(true);
    // Another app (a previous solution provider's) does not deliver our webhooks.
    expect(listsApp([app('111')], '222')).toBe(false);
    expect(listsApp([], '222')).toBe(false);
  });

  it('without an app id, when any app is listed', () => {
    expect(listsApp([app('111')], '')).toBe(true);
    expect(listsApp([], '')).toBe(false);
  });

  it('ignores entries without whatsapp_business_api_data rather than failing on them', () => {
    expect(listsApp([{} as never, app('222')], '222')).toBe(true);
    expect(listsApp([{} as never], '222')).toBe(false);
  });
});
