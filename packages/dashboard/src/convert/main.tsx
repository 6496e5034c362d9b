import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Layout } from '../shared/components.js';
import { KeysPage } from '../shared/keys-page.js';
import { usePage } from '../shared/router.js';
import { WebhooksPage } from '../shared/webhooks-page.js';
import { SessionGate } from '../shared/session.js';
import '../shared/styles.css';
import { ConvertPage } from './convert-page.js';
import { OverviewPage } from './overview-page.js';

const PRODUCT = 'File Conversion';
const NAV = [
  { to: '/', label: 'Overview' },
  { to: '/convert', label: 'Convert' },
  { to: '/keys', label: 'API keys' },
  { to: '/webhooks', label: 'Webhooks' },
];

const EVENTS = [
  { name: 'conversion.completed', explain: 'a conversion finished; its output is ready' },
  { name: 'conversion.failed', explain: 'a conversion failed (it was not charged)' },
];

function Page() {
  const page = usePage();
  switch (page) {
    case '/convert':
      return <ConvertPage />;
    case '/keys':
      return <KeysPage keyPrefix="cv_live_" />;
    case '/webhooks':
      return <WebhooksPage events={EVENTS} placeholder="https://example.com/hooks/conversions" cause="a conversion finishes" requestSecret />;
    default:
      return <OverviewPage />;
  }
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SessionGate product={PRODUCT}>
      <Layout product={PRODUCT} nav={NAV}>
        <Page />
      </Layout>
    </SessionGate>
  </StrictMode>,
);
