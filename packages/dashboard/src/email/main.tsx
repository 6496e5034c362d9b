import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Layout } from '../shared/components.js';
import { KeysPage } from '../shared/keys-page.js';
import { usePage } from '../shared/router.js';
import { SessionGate } from '../shared/session.js';
import '../shared/styles.css';
import { JobsPage } from './jobs-page.js';
import { OverviewPage } from './overview-page.js';
import { VerifyPage } from './verify-page.js';
import { WebhooksPage } from '../shared/webhooks-page.js';

const EVENTS = [
  { name: 'job.completed', explain: 'a bulk job finished' },
  { name: 'job.failed', explain: 'a bulk job failed' },
  { name: 'batch.completed', explain: 'a batch verification finished' },
];

const PRODUCT = 'Email Verification';
const NAV = [
  { to: '/', label: 'Overview' },
  { to: '/verify', label: 'Verify' },
  { to: '/jobs', label: 'Bulk jobs' },
  { to: '/keys', label: 'API keys' },
  { to: '/webhooks', label: 'Webhooks' },
];

function Page() {
  const page = usePage();
  switch (page) {
    case '/verify':
      return <VerifyPage />;
    case '/jobs':
      return <JobsPage />;
    case '/keys':
      return <KeysPage keyPrefix="ev_live_" />;
    case '/webhooks':
      return <WebhooksPage events={EVENTS} placeholder="https://example.com/hooks/email" cause="a job or batch finishes" />;
    default:
      return <OverviewPage />;
  }
}

function App() {
  return (
    <SessionGate product={PRODUCT}>
      <Layout product={PRODUCT} nav={NAV}>
        <Page />
      </Layout>
    </SessionGate>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
