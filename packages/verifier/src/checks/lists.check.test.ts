import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkLists, isDisposableDomain, isFreeProvider, isRoleAccount, LIST_SIZES } from './lists.check.js';

test('the lists are the real datasets, tens of thousands of disposable domains', () => {
  assert.ok(LIST_SIZES.disposable > 30_000, `disposable ${LIST_SIZES.disposable}`);
  assert.ok(LIST_SIZES.free > 1_000, `free ${LIST_SIZES.free}`);
  assert.ok(LIST_SIZES.roles > 100, `roles ${LIST_SIZES.roles}`);
});

test('disposable domains match exactly and through their subdomains, but not the bare TLD', () => {
  assert.equal(isDisposableDomain('mailinator.com'), true);
  assert.equal(isDisposableDomain('x.y.mailinator.com'), true);
  assert.equal(isDisposableDomain('yopmail.com'), true);
  assert.equal(isDisposableDomain('com'), false);
  assert.equal(isDisposableDomain('stripe.com'), false);
  assert.equal(isDisposableDomain('example.org'), false);
});

test('major providers are never disposable, and public suffixes on the list only match exactly', () => {
  for (const d of ['gmail.com', 'outlook.com', 'hotmail.com', 'yahoo.com', 'icloud.com', 'gmx.de', 'mail.ru', 'qq.com', 'tom.com']) {
    assert.equal(isDisposableDomain(d), false, d);
  }
  assert.equal(isDisposableDomain('pp.ua'), true);
  assert.equal(isDisposableDomain('shop.pp.ua'), false);
});

test('free providers are exact matches and exclude disposable domains', () => {
  assert.equal(isFreeProvider('gmail.com'), true);
  assert.equal(isFreeProvider('yahoo.co.uk'), true);
  assert.equal(isFreeProvider('mail.gmail.com'), false);
  assert.equal(isFreeProvider('mailinator.com'), false);
  assert.equal(isFreeProvider('stripe.com'), false);
});

test('role accounts ignore case and +tags', () => {
  for (const l of ['admin', 'Info', 'noreply', 'no-reply', 'postmaster', 'sales', 'support+eu']) assert.equal(isRoleAccount(l), true, l);
  for (const l of ['alice', 'john.smith', 'admin.jones']) assert.equal(isRoleAccount(l), false, l);
  assert.deepEqual(checkLists('info', 'mailinator.com'), { disposable: true, roleBased: true, freeProvider: false });
});

test('the committed lists are exactly what refresh-lists builds from the installed datasets and overrides', () => {
  const script = fileURLToPath(new URL('../../scripts/refresh-lists.mjs', import.meta.url));
  const res = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
});
