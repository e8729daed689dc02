/**
 * ISO 8601 text of dates and instants, computed with integer arithmetic (the civil-from-days
 * algorithm of Howard Hinnant's date library): several times cheaper than a Date object and its
 * toISOString() per value, which showed at the top of a profile of result encoding.
 */

const MS_PER_DAY = 86_400_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/** Years 0..9999 print as four digits; others as ISO 8601's expanded form (±YYYYYY). */
function yearText(year: number): string {
  if (year >= 0 && year <= 9999) return String(year).padStart(4, '0');
  return `${year < 0 ? '-' : '+'}${String(Math.abs(year)).padStart(6, '0')}`;
}

/** `YYYY-MM-DD` of a day counted from 1970-01-01 (proleptic Gregorian, as DuckDB counts). */
export function isoDate(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // March = 0
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${yearText(year)}-${TWO_DIGITS[month] ?? ''}-${TWO_DIGITS[day] ?? ''}`;
}

/**
 * `YYYY-MM-DDTHH:MM:SS.mmm` + `below` (the digits under the millisecond, `belowDigits` of them,
 * left out when zero) + `Z`, for milliseconds since 1970 in UTC.
 */
export function isoInstant(epochMs: number, below = 0, belowDigits = 0): string {
  const days = Math.floor(epochMs / MS_PER_DAY);
  let rest = epochMs - days * MS_PER_DAY;
  const millis = rest % 1000;
  rest = (rest - millis) / 1000;
  const seconds = rest % 60;
  rest = (rest - seconds) / 60;
  const minutes = rest % 60;
  const hours = (rest - minutes) / 60;
  const fraction = below === 0 ? '' : String(below).padStart(belowDigits, '0');
  return `${isoDate(days)}T${TWO_DIGITS[hours] ?? ''}:${TWO_DIGITS[minutes] ?? ''}:${TWO_DIGITS[seconds] ?? ''}.${THREE_DIGITS[millis] ?? ''}${fraction}Z`;
}
