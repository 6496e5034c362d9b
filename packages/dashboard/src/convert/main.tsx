import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Layout } from '../shared/components.js';
import { KeysPage } from '../shared/keys-page.js';
import { usePage } from '../shared/router.js';
import { SessionGate } from '../shared/session.js';
import '../shared/styles.css';
import { ConvertPage } from './convert-page.js';
import { OverviewPage } from './overview-page.js';

const PRODUCT = 'File Conversion';
const NAV = [
  { to: '/', label: 'Overview' },
  { to: '/convert', label: 'Convert' },
  { to: '/keys', label: 'API keys' },
];

function Page() {
  const page = usePage();
  switch (page) {
    case '/convert':
      return <ConvertPage />;
    case '/keys':
      return <KeysPage keyPrefix="cv_live_" />;
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
