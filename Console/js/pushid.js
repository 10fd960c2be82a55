// Push ids as Firebase clients make them: 8 characters of millisecond timestamp, then 12 random
// characters that are incremented instead when two ids fall in the same millisecond.

const ALPHABET = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

let lastTime = -1;
let lastRandom = [];

/** `now` should be the server's time (local clock plus the offset from the hello). */
export function pushId(now = Date.now()) {
  const timeChars = [];
  let time = now;
  for (let i = 7; i >= 0; i--) {
    timeChars[i] = ALPHABET[time % 64];
    time = Math.floor(time / 64);
  }
  if (now === lastTime) {
    let i = 11;
    while (i >= 0 && lastRandom[i] === 63) lastRandom[i--] = 0;
    if (i >= 0) lastRandom[i] += 1;
  } else {
    lastTime = now;
    lastRandom = Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => byte & 63);
  }
  return timeChars.join('') + lastRandom.map((digit) => ALPHABET[digit]).join('');
}
