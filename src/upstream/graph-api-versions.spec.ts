import { GRAPH_API_EXPIRIES, graphApiVersionOf, versionStanding } from './graph-api-versions.js';

describe('Graph API versions', () => {
  it('reads the version from the base URL, with or without a trailing slash; none when the path has none', () => {
    expect(graphApiVersionOf('https://graph.facebook.com/v25.0')).toBe('v25.0');
    expect(graphApiVersionOf('http://127.0.0.1:4010/v23.0/')).toBe('v23.0');
    expect(graphApiVersionOf('https://graph.facebook.com')).toBeNull();
    expect(graphApiVersionOf('not a url')).toBeNull();
  });

  it('is expiring within 180 days of the published date and after it, not before; unknown dates never warn', () => {
    const url = 'https://graph.facebook.com/v23.0';
    expect(GRAPH_API_EXPIRIES['v23.0']).toBe('2027-10-08');
    expect(versionStanding(url, new Date('2027-04-10T00:00:00Z'))).toMatchObject({ expiring: false, daysLeft: 181 });
    expect(versionStanding(url, new Date('2027-04-11T00:00:00Z'))).toMatchObject({ expiring: true, daysLeft: 180 });
    expect(versionStanding(url, new Date('2027-10-09T00:00:00Z'))).toMatchObject({ expiring: true, daysLeft: -1 });
    expect(versionStanding('https://graph.facebook.com/v27.0', new Date('2030-01-01'))).toEqual({
      version: 'v27.0',
      expiresAt: null,
      daysLeft: null,
      expiring: false,
    });
  });
});
