/**
 * Perl POD (plain old documentation) with Perl's own formatters from Debian's perl package:
 * `pod2html`, `pod2man` and `pod2text`. Everything else a POD file becomes goes through the
 * HTML (registry chains: pod → html → docx/pdf/epub …). pod2html keeps its link cache in the
 * job's folder (the working directory), never in a shared place.
 */
import { readEngineText, writeJobFile } from '../guards/output-guard.js';
import { probeBinaries, runStep, type Engine, type EngineProbe, type JobContext, type Step } from './engine.js';

const PERL = '/usr/bin/perl';
const POD2HTML = '/usr/bin/pod2html';
const POD2MAN = '/usr/bin/pod2man';
const POD2TEXT = '/usr/bin/pod2text';

/** The POD engine. */
export class PodEngine implements Engine {
  readonly name = 'pod';
  readonly reads = ['pod'];
  readonly writes = ['html', 'man', 'txt'];

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    // The scripts print no version; their modules have one.
    return probeBinaries(this.name, [PERL, POD2TEXT, POD2HTML, POD2MAN], ['-MPod::Html', '-MPod::Text', '-e', 'print "Pod::Html $Pod::Html::VERSION, Pod::Text $Pod::Text::VERSION\n"'], /^(Pod::Html .+)$/m);
  }

  async convert(step: Step): Promise<void> {
    switch (step.to) {
      case 'html':
        // No cross-page link search (--nopodpath is not in every version; an empty --podpath is).
        await runStep(step, POD2HTML, [`--infile=${step.input}`, `--outfile=${step.output}`, '--title=Document', `--cachedir=${step.job.dir}`, '--podpath=.', '--podroot=.', '--quiet']);
        await dropXmlDeclaration(step.output, step.job);
        return;
      case 'man':
        await runStep(step, POD2MAN, ['--utf8', '--name=DOCUMENT', '--section=1', '--center=Documentation', '--release= ', '--date= ', step.input, step.output]);
        return;
      default:
        await runStep(step, POD2TEXT, ['--utf8', step.input, step.output]);
    }
  }
}

/**
 * pod2html writes XHTML 1.0 with an XML declaration in front, which makes it an XML file to
 * libmagic and to browsers sniffing it; without the declaration it is the HTML it says it is.
 */
async function dropXmlDeclaration(path: string, job: JobContext): Promise<void> {
  const text = (await readEngineText(path, job, 'pod2html')) ?? '';
  const body = text.replace(/^<\?xml[^>]*\?>\s*/, '');
  if (body !== text) await writeJobFile(path, body);
}
