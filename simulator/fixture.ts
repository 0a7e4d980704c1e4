/**
 * The simulator's seed data, in Meta's wire shapes (the same objects the Graph API returns), so the
 * routes can hand them out without mapping. Every value is invented.
 */

export interface SimPhoneNumber {
  id: string;
  display_phone_number: string;
  verified_name: string;
  quality_rating: 'GREEN' | 'YELLOW' | 'RED' | 'NA' | 'UNKNOWN';
  code_verification_status: string;
  status: string;
  name_status: string;
  platform_type: string;
  throughput: { level: string };
}

export interface SimTemplateButton {
  type: 'URL' | 'QUICK_REPLY' | 'PHONE_NUMBER' | 'OTP';
  /** OTP buttons of authentication templates: COPY_CODE, ONE_TAP or ZERO_TAP. */
  otp_type?: 'COPY_CODE' | 'ONE_TAP' | 'ZERO_TAP';
  text: string;
  url?: string;
  phone_number?: string;
  example?: string[];
}

export interface SimTemplateComponent {
  type: 'HEADER' | 'BODY' | 'FOOTER' | 'BUTTONS';
  format?: 'TEXT' | 'IMAGE' | 'VIDEO' | 'DOCUMENT' | 'LOCATION';
  text?: string;
  buttons?: SimTemplateButton[];
  example?: Record<string, unknown>;
}

export interface SimTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  parameter_format: 'POSITIONAL' | 'NAMED';
  components: SimTemplateComponent[];
}

export interface SimAccount {
  id: string;
  name: string;
  /** Meta's marketing_messages_onboarding_status; absent until set (`POST /_sim/marketing-messages`). */
  marketing_messages_onboarding_status?: string;
  accessToken: string;
  phoneNumbers: SimPhoneNumber[];
  templates: SimTemplate[];
}

export interface Fixture {
  /** The first account is the model that `POST /_sim/accounts` clones. */
  accounts: SimAccount[];
}

function phone(
  id: string,
  display: string,
  verifiedName: string,
  state: 'CONNECTED' | 'PENDING' | 'DISCONNECTED',
): SimPhoneNumber {
  const connected = state === 'CONNECTED';
  return {
    id,
    display_phone_number: display,
    verified_name: verifiedName,
    quality_rating: connected ? 'GREEN' : 'UNKNOWN',
    code_verification_status: connected ? 'VERIFIED' : 'NOT_VERIFIED',
    status: state,
    name_status: connected ? 'APPROVED' : 'PENDING_REVIEW',
    platform_type: connected ? 'CLOUD_API' : 'NOT_APPLICABLE',
    throughput: { level: connected ? 'STANDARD' : 'NOT_APPLICABLE' },
  };
}

const trackButton: SimTemplateComponent = {
  type: 'BUTTONS',
  buttons: [
    {
      type: 'URL',
      text: 'Track parcel',
      url: 'https://track.example.com/{{1}}',
      example: ['https://track.example.com/ORD-7781'],
    },
    { type: 'QUICK_REPLY', text: 'Stop updates' },
  ],
};

function parcelCoTemplates(): SimTemplate[] {
  return [
    {
      id: '1203344556600001',
      name: 'parcel_update',
      language: 'en_GB',
      status: 'APPROVED',
      category: 'UTILITY',
      parameter_format: 'POSITIONAL',
      components: [
        { type: 'HEADER', format: 'TEXT', text: 'Parcel {{1}}', example: { header_text: ['ORD-7781'] } },
        {
          type: 'BODY',
          text: 'Hi {{1}}, order {{2}} is out for delivery.',
          example: { body_text: [['Priya', 'ORD-7781']] },
        },
        { type: 'FOOTER', text: 'Parcel Co' },
        trackButton,
      ],
    },
    {
      id: '1203344556600002',
      name: 'parcel_update',
      language: 'en_US',
      status: 'APPROVED',
      category: 'UTILITY',
      parameter_format: 'POSITIONAL',
      components: [
        { type: 'HEADER', format: 'TEXT', text: 'Package {{1}}', example: { header_text: ['ORD-7781'] } },
        {
          type: 'BODY',
          text: 'Hi {{1}}, your order {{2}} is on its way.',
          example: { body_text: [['Priya', 'ORD-7781']] },
        },
        trackButton,
      ],
    },
    {
      id: '1203344556600003',
      name: 'delivery_photo',
      language: 'en_GB',
      status: 'APPROVED',
      category: 'UTILITY',
      parameter_format: 'POSITIONAL',
      components: [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://cdn.example.com/p.jpg'] } },
        { type: 'BODY', text: 'Parcel {{1}} was delivered.', example: { body_text: [['ORD-7781']] } },
      ],
    },
    {
      id: '1203344556600004',
      name: 'welcome_named',
      language: 'en_GB',
      status: 'APPROVED',
      category: 'MARKETING',
      parameter_format: 'NAMED',
      components: [
        {
          type: 'BODY',
          text: 'Hello {{first_name}}, welcome to {{company}}!',
          example: {
            body_text_named_params: [
              { param_name: 'first_name', example: 'Priya' },
              { param_name: 'company', example: 'Parcel Co' },
            ],
          },
        },
      ],
    },
    {
      id: '1203344556600005',
      name: 'order_confirmation',
      language: 'pt_BR',
      status: 'APPROVED',
      category: 'UTILITY',
      parameter_format: 'POSITIONAL',
      components: [
        {
          type: 'BODY',
          text: 'Olá {{1}}, seu pedido {{2}} foi confirmado.',
          example: { body_text: [['João', 'ORD-7781']] },
        },
      ],
    },
    {
      id: '1203344556600006',
      name: 'hello_world',
      language: 'en_US',
      status: 'APPROVED',
      category: 'UTILITY',
      parameter_format: 'POSITIONAL',
      components: [{ type: 'BODY', text: 'Hello World' }],
    },
    {
      id: '1203344556600007',
      name: 'summer_sale',
      language: 'en_GB',
      status: 'PENDING',
      category: 'MARKETING',
      parameter_format: 'POSITIONAL',
      components: [{ type: 'BODY', text: 'Summer sale: {{1}}% off.', example: { body_text: [['20']] } }],
    },
    {
      id: '1203344556600008',
      name: 'account_alert',
      language: 'en_GB',
      status: 'REJECTED',
      category: 'UTILITY',
      parameter_format: 'POSITIONAL',
      components: [{ type: 'BODY', text: 'Your account {{1}} needs attention.', example: { body_text: [['A1']] } }],
    },
    {
      id: '1203344556600009',
      name: 'spring_sale',
      language: 'en_US',
      status: 'PAUSED',
      category: 'MARKETING',
      parameter_format: 'POSITIONAL',
      components: [{ type: 'BODY', text: 'Spring sale starts {{1}}.', example: { body_text: [['Monday']] } }],
    },
    {
      id: '1203344556600010',
      name: 'weekly_deals',
      language: 'en_US',
      status: 'APPROVED',
      category: 'MARKETING',
      parameter_format: 'POSITIONAL',
      components: [{ type: 'BODY', text: 'This week only: 2 for 1 on next-day delivery.' }],
    },
    {
      id: '1203344556600011',
      name: 'login_code',
      language: 'en_US',
      status: 'APPROVED',
      category: 'AUTHENTICATION',
      parameter_format: 'POSITIONAL',
      components: [
        { type: 'BODY', text: '{{1}} is your verification code.', example: { body_text: [['123456']] } },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
      ],
    },
  ];
}

/** A fresh copy each call: the simulator mutates template statuses, tests must not share that state. */
export function defaultFixture(): Fixture {
  return {
    accounts: [
      {
        id: '310000000000001',
        name: 'Parcel Co',
        accessToken: 'sim-token-waba-1',
        phoneNumbers: [
          phone('402000000000011', '+44 7700 900011', 'Parcel Co', 'CONNECTED'),
          phone('402000000000012', '+44 7700 900012', 'Parcel Co', 'PENDING'),
          phone('402000000000013', '+44 7700 900013', 'Parcel Co Returns', 'DISCONNECTED'),
        ],
        templates: parcelCoTemplates(),
      },
      {
        id: '310000000000002',
        name: 'Bloom Florist',
        accessToken: 'sim-token-waba-2',
        phoneNumbers: [
          phone('402000000000021', '+1 555-010-0021', 'Bloom Florist', 'CONNECTED'),
          phone('402000000000022', '+1 555-010-0022', 'Bloom Florist', 'DISCONNECTED'),
        ],
        templates: [
          {
            id: '1203344556600101',
            name: 'bouquet_ready',
            language: 'en_US',
            status: 'APPROVED',
            category: 'UTILITY',
            parameter_format: 'POSITIONAL',
            components: [{ type: 'BODY', text: 'Hi {{1}}, your bouquet is ready.', example: { body_text: [['Sam']] } }],
          },
          {
            id: '1203344556600102',
            name: 'bouquet_ready',
            language: 'es_MX',
            status: 'APPROVED',
            category: 'UTILITY',
            parameter_format: 'POSITIONAL',
            components: [{ type: 'BODY', text: 'Hola {{1}}, tu ramo está listo.', example: { body_text: [['Sam']] } }],
          },
          {
            id: '1203344556600103',
            name: 'valentines_offer',
            language: 'en_US',
            status: 'PENDING',
            category: 'MARKETING',
            parameter_format: 'NAMED',
            components: [
              {
                type: 'BODY',
                text: 'Dear {{first_name}}, roses are 10% off.',
                example: { body_text_named_params: [{ param_name: 'first_name', example: 'Sam' }] },
              },
            ],
          },
        ],
      },
    ],
  };
}
