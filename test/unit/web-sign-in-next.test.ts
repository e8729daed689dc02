import { describe, expect, it } from '@jest/globals';
import { localPath } from '../../web/src/pages/sign-in/local-path.js';

describe('where the sign-in page goes next (web pages)', () => {
  it('goes back to a path of this site', () => {
    expect(localPath('/tasks/abc?x=1')).toBe('/tasks/abc?x=1');
  });

  it.each(['//evil.example/', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)', ''])(
    'goes home instead of to %p (no open redirect)',
    (next) => {
      expect(localPath(next)).toBe('/');
    },
  );

  it('goes home instead of back to the sign-in page', () => {
    expect(localPath('/login?next=%2Ftasks%2Fabc')).toBe('/');
  });

  it('goes home without a next', () => {
    expect(localPath(undefined)).toBe('/');
  });
});
