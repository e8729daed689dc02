import { describe, expect, it } from '@jest/globals';
import { loggedUrl } from '../../platform/logged-url.js';

describe('loggedUrl', () => {
  it('keeps an ordinary path and query as it is', () => {
    expect(loggedUrl('/v1/tasks?limit=1&after=abc')).toBe('/v1/tasks?limit=1&after=abc');
  });

  it('redacts the token of a share link', () => {
    expect(loggedUrl('/v1/share/eyJhbGciOi.secret-part?x=1')).toBe('/v1/share/[redacted]?x=1');
  });

  it('redacts the token of the share page and of its event stream', () => {
    expect(loggedUrl('/share/abc.secret-part')).toBe('/share/[redacted]');
    expect(loggedUrl('/v1/share/abc.secret-part/events')).toBe('/v1/share/[redacted]/events');
  });

  it("redacts a signed storage URL's signature and keeps its method and expiry", () => {
    expect(loggedUrl('/v1/storage/org/a.txt?method=GET&expires=1700000000&signature=abcdef')).toBe(
      '/v1/storage/org/a.txt?method=GET&expires=1700000000&signature=[redacted]',
    );
  });

  it('redacts S3-style credentials whatever their letter case or encoding', () => {
    expect(
      loggedUrl('/x?X-Amz-Signature=s&X-Amz-Credential=c&X%2DAmz%2DSecurity%2DToken=t&X-Amz-Date=d'),
    ).toBe(
      '/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&X%2DAmz%2DSecurity%2DToken=[redacted]&X-Amz-Date=d',
    );
  });

  it('survives a malformed escape in a parameter name', () => {
    expect(loggedUrl('/x?%E0%A4%A=1&token=t')).toBe('/x?%E0%A4%A=1&token=[redacted]');
  });

  it("redacts a model gateway call's prompt token given as Gemini's key parameter", () => {
    expect(
      loggedUrl('/model-gateway/gemini/v1beta/models/m:streamGenerateContent?alt=sse&key=agp1.a.b'),
    ).toBe('/model-gateway/gemini/v1beta/models/m:streamGenerateContent?alt=sse&key=[redacted]');
  });
});
