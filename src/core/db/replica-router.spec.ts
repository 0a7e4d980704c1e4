import pg from 'pg';
import { TemporarilyUnavailable } from '../errors/domain-errors.js';
import { replicaFault } from './replica-router.js';

/** Which failures of a read on the replica are worth one more try on the primary. */
describe('replicaFault', () => {
  const sqlState = (code: string) => Object.assign(new pg.DatabaseError('x', 0, 'error'), { code, severity: 'ERROR' });

  it('takes the replica being out of reach, going away or in recovery conflict', () => {
    expect(replicaFault(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { errno: -111 }))).toBe(true);
    expect(replicaFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(replicaFault(new TemporarilyUnavailable('busy', 1, []))).toBe(true);
    expect(replicaFault(sqlState('57P01'))).toBe(true); // admin_shutdown
    expect(replicaFault(sqlState('08006'))).toBe(true); // connection_failure
    expect(replicaFault(sqlState('53300'))).toBe(true); // too_many_connections
    expect(replicaFault(sqlState('40001'))).toBe(true); // canceling statement due to conflict with recovery
  });

  it('leaves the read’s own errors alone: they would fail on the primary too', () => {
    expect(replicaFault(sqlState('22P02'))).toBe(false); // invalid_text_representation
    expect(replicaFault(sqlState('42P01'))).toBe(false); // undefined_table
    expect(replicaFault(new TypeError('x is undefined'))).toBe(false);
    expect(replicaFault(undefined)).toBe(false);
  });
});
