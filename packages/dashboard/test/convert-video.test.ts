// The conversion page's video → picture options (issue 31) in Debian's chromium, against the
// real service and ffmpeg: a clip generated here becomes a short GIF and a still WebP.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { checkLayout, openBrowser, signIn, type Browser } from './browser.test-support.js';
import { createUser, startConvertService, type RunningService } from './services.test-support.js';

const PASSWORD = 'correct horse battery staple';

/** Width, height and frame count of a picture or animation, as ffprobe reads it. */
function probe(path: string): { width: number; height: number; frames: number } {
  const out = JSON.parse(execFileSync('/usr/bin/ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,nb_read_frames', '-of', 'json', path]).toString()) as { streams: Array<{ width: number; height: number; nb_read_frames: string }> };
  const s = out.streams[0]!;
  return { width: s.width, height: s.height, frames: Number(s.nb_read_frames) };
}

async function dropClip(page: Page, bytes: Buffer): Promise<void> {
  const transfer = await page.evaluateHandle(([data]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(data)], 'clip.mp4', { type: 'video/mp4' }));
    return dt;
  }, [[...bytes]] as [number[]]);
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer: transfer });
  await page.getByTestId('detected').filter({ hasText: 'MP4' }).waitFor();
}

describe('conversion dashboard: a video as an animation or a still, in chromium', { timeout: 180_000 }, () => {
  let svc: RunningService;
  let b: Browser;
  let work: string;
  let clip: Buffer;

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'dashboard-video-'));
    // 3 s of ffmpeg's test pattern at 25 fps, 320×240, H.264 (what phones write).
    execFileSync('/usr/bin/ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=duration=3:size=320x240:rate=25', '-pix_fmt', 'yuv420p', '-c:v', 'libx264', join(work, 'clip.mp4')]);
    clip = await readFile(join(work, 'clip.mp4'));
    svc = await startConvertService({ CONVERT_DATA_DIR: join(work, 'data') });
    createUser('convert-api', svc.env, 'vid@example.test', 'pro', PASSWORD);
    b = await openBrowser(svc.url);
    await signIn(b.page, svc.url, 'vid@example.test', PASSWORD);
  });
  after(async () => {
    await b?.close();
    await svc?.close();
    await rm(work, { recursive: true, force: true });
  });

  test('mp4 → gif: start, length, frames per second and width as chosen', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropClip(page, clip);
    await page.getByLabel('Convert to').selectOption('gif');
    const options = page.getByTestId('video-options');
    await page.getByLabel('Start at (seconds)').fill('0.5');
    await page.getByLabel('Length (seconds)').fill('1');
    await page.getByLabel('Frames per second').fill('5');
    await page.getByLabel('Plays').fill('2');
    await options.getByLabel('Width (pixels)').fill('160');
    await b.shot('convert-video-options');
    await checkLayout(b, 'convert-video-options');
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    await page.getByText(/^clip\.gif, /).or(page.locator('main .error')).first().waitFor({ timeout: 120_000 });
    assert.equal(await page.locator('main .error').count(), 0, await page.locator('main').innerText());
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download', exact: true }).first().click()]);
    const got = probe(await file.path());
    assert.deepEqual(got, { width: 160, height: 120, frames: 5 }, 'one second at 5 fps, 160 px wide');
    const gif = await readFile(await file.path());
    const ext = gif.indexOf('NETSCAPE2.0');
    assert.ok(ext > 0, 'a looping animation');
    assert.equal(gif.readUInt16LE(ext + 13), 1, 'plays twice: one repeat');
  });

  test('mp4 → webp still: the frame at a time, the clip’s own size, no animation options', async () => {
    const { page } = b;
    await page.getByRole('link', { name: 'Convert' }).click();
    await dropClip(page, clip);
    await page.getByLabel('Convert to').selectOption('webp');
    await page.getByLabel('One still picture instead of an animation').check();
    assert.equal(await page.getByLabel('Frames per second').count(), 0, 'a still has no frame rate');
    await page.getByLabel('Frame at (seconds)').fill('1');
    await page.getByTestId('video-options').getByLabel('Width (pixels)').fill('');
    await page.getByRole('button', { name: 'Convert', exact: true }).click();
    await page.getByText(/^clip\.webp, /).waitFor({ timeout: 120_000 });
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download', exact: true }).first().click()]);
    const webp = await readFile(await file.path());
    assert.equal(webp.subarray(8, 12).toString(), 'WEBP');
    assert.equal(webp.includes(Buffer.from('ANIM')), false, 'not animated');
    assert.deepEqual(probe(await file.path()), { width: 320, height: 240, frames: 1 });
    assert.deepEqual(b.foreign, []);
    assert.deepEqual(b.problems, []);
  });
});
