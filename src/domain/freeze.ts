/**
 * Freezes a value and everything it holds, so what was checked or configured cannot change
 * afterwards. `keep` names values left as they are (a Secret hides its text behind a method).
 */
export function deepFreeze<T>(value: T, keep?: (value: object) => boolean): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value) && !(keep?.(value) ?? false)) {
    for (const child of Object.values(value)) deepFreeze(child, keep);
    Object.freeze(value);
  }
  return value;
}
