import { errorCategoryOf, nextStatus } from './message-status.js';

const state = (status: 'pending' | 'sent' | 'delivered' | 'read' | 'failed', errorCategory: string | null = null) => ({
  status,
  errorCategory,
});

describe('nextStatus', () => {
  it('moves forward through sent, delivered, read', () => {
    expect(nextStatus(state('pending'), 'sent')).toBe('sent');
    expect(nextStatus(state('sent'), 'delivered')).toBe('delivered');
    expect(nextStatus(state('delivered'), 'read')).toBe('read');
  });

  it('jumps to read without delivered', () => {
    expect(nextStatus(state('sent'), 'read')).toBe('read');
  });

  it('never downgrades on a late or duplicated status', () => {
    expect(nextStatus(state('read'), 'delivered')).toBeNull();
    expect(nextStatus(state('read'), 'sent')).toBeNull();
    expect(nextStatus(state('delivered'), 'delivered')).toBeNull();
  });

  it('fails a message not yet delivered, and only that', () => {
    expect(nextStatus(state('sent'), 'failed')).toBe('failed');
    expect(nextStatus(state('pending'), 'failed')).toBe('failed');
    expect(nextStatus(state('delivered'), 'failed')).toBeNull();
    expect(nextStatus(state('failed', 'window'), 'delivered')).toBeNull();
  });

  it('lets real progress override a failure recorded for an unknown outcome (timeout)', () => {
    expect(nextStatus(state('failed', 'retryable'), 'delivered')).toBe('delivered');
    expect(nextStatus(state('failed', 'retryable'), 'failed')).toBeNull();
  });

  it('ignores statuses it does not rank (played, unknown)', () => {
    expect(nextStatus(state('sent'), 'played')).toBeNull();
  });
});

describe('errorCategoryOf', () => {
  it('maps Meta codes to categories', () => {
    expect(errorCategoryOf(131047)).toBe('window');
    expect(errorCategoryOf(190)).toBe('credential');
    expect(errorCategoryOf(131050)).toBe('policy');
    expect(errorCategoryOf(130429)).toBe('throughput');
    expect(errorCategoryOf(131056)).toBe('pair_rate_limit');
    expect(errorCategoryOf(131026)).toBe('permanent');
    expect(errorCategoryOf(undefined, 'retryable')).toBe('retryable');
  });
});
