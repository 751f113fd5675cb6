/** Entry point of the service (`node dist/server/main.js`, `npm start`): see start-server.ts. */
import { runServer } from './start-server.js';

void runServer(process.env);
