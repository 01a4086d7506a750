// Logistic (softmax) regression on Fashion-MNIST with N worker processes sharing one hopper
// parameter table.
//
//   ps_logreg [--conninfo STR] [--table NAME] [--workers N] [--iterations T] [--batch B] [--lr LR]
//             [--consistency bsp|ssp|sparse_ssp|asp] [--staleness S] [--async]
//             [--data DIR | --synthetic] [--seed S]
//
// The table holds one chunk per class: its 784 pixel weights and a bias (chunk_size 785). The
// parent creates the table and forks N workers; worker w trains on the training images i with
// i % N == w: each iteration it reads all chunks (GetChunk), computes the gradient of the softmax
// cross-entropy on a random minibatch of B of its images, adds -lr * gradient (AddChunk) and
// clocks. When all workers are done the parent reads the weights (taking over worker 0) and
// reports the accuracy on the 10,000 test images. --async overlaps communication with computation:
// the Get of the next iteration's weights is sent (GetChunkAsync) before the gradient step and
// awaited after it, so its round trip -- and, under BSP or SSP, its wait for slower workers --
// happens while the worker computes; each gradient then uses weights one iteration older (one more
// step of staleness). --synthetic trains on small generated data (for
// CI) instead of reading the idx files of DIR (default /usr/share/datasets/fashion-mnist).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "hopper/kvtable.h"

namespace {

struct Data {
    int n = 0, dim = 0;
    std::vector<float> x;    // n x dim, scaled to [0, 1]
    std::vector<uint8_t> y;  // n labels
};

constexpr int kClasses = 10;

uint32_t be32(const unsigned char* p) {
    return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

std::vector<unsigned char> read_gz(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error("cannot open " + path);
    std::vector<unsigned char> out;
    unsigned char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
    gzclose(f);
    if (n < 0) throw std::runtime_error("cannot read " + path);
    return out;
}

// The idx files of MNIST-style datasets: images (magic 2051: n, rows, cols, bytes) and labels
// (magic 2049: n, bytes).
Data load_idx(const std::string& dir, const std::string& prefix) {
    const auto images = read_gz(dir + "/" + prefix + "-images-idx3-ubyte.gz");
    const auto labels = read_gz(dir + "/" + prefix + "-labels-idx1-ubyte.gz");
    if (images.size() < 16 || be32(&images[0]) != 2051 || labels.size() < 8 || be32(&labels[0]) != 2049)
        throw std::runtime_error("not idx files: " + dir + "/" + prefix);
    Data d;
    d.n = int(be32(&images[4]));
    d.dim = int(be32(&images[8]) * be32(&images[12]));
    if (int(be32(&labels[4])) != d.n || images.size() != 16 + size_t(d.n) * d.dim || labels.size() != 8 + size_t(d.n))
        throw std::runtime_error("idx files do not match: " + dir + "/" + prefix);
    d.x.resize(size_t(d.n) * d.dim);
    for (size_t i = 0; i < d.x.size(); ++i) d.x[i] = images[16 + i] / 255.0f;
    d.y.assign(labels.begin() + 8, labels.end());
    return d;
}

// Ten Gaussian blobs in 20 dimensions (overlapping a little: a linear model reaches about 0.95).
Data synthetic(int n, unsigned seed) {
    Data d;
    d.n = n;
    d.dim = 20;
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    std::mt19937 centers_rng(12345);
    std::uniform_real_distribution<float> center(-2.0f, 2.0f);
    std::vector<float> centers(size_t(kClasses) * d.dim);
    for (auto& c : centers) c = center(centers_rng);
    d.x.resize(size_t(n) * d.dim);
    d.y.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
        const int label = int(rng() % kClasses);
        d.y[size_t(i)] = uint8_t(label);
        for (int j = 0; j < d.dim; ++j)
            d.x[size_t(i) * d.dim + j] = centers[size_t(label) * d.dim + j] + 1.2f * noise(rng);
    }
    return d;
}

// Class scores -> softmax probabilities p; returns the cross-entropy loss of `label`.
float forward(const std::vector<float>& w, int dim, const float* x, int label, float* p) {
    const int stride = dim + 1;
    float best = -1e30f;
    for (int k = 0; k < kClasses; ++k) {
        const float* wk = &w[size_t(k) * stride];
        float s = wk[dim];
        for (int j = 0; j < dim; ++j) s += wk[j] * x[j];
        p[k] = s;
        best = std::max(best, s);
    }
    float sum = 0;
    for (int k = 0; k < kClasses; ++k) sum += (p[k] = std::exp(p[k] - best));
    for (int k = 0; k < kClasses; ++k) p[k] /= sum;
    return -std::log(std::max(p[label], 1e-12f));
}

double accuracy(const std::vector<float>& w, const Data& d) {
    int right = 0;
    float p[kClasses];
    for (int i = 0; i < d.n; ++i) {
        forward(w, d.dim, &d.x[size_t(i) * d.dim], d.y[size_t(i)], p);
        int best = 0;
        for (int k = 1; k < kClasses; ++k)
            if (p[k] > p[best]) best = k;
        right += best == d.y[size_t(i)];
    }
    return double(right) / d.n;
}

struct Options {
    std::string conninfo = "";
    std::string table = "fashion_logreg";
    int workers = 2;
    int iterations = 2000;
    int batch = 100;
    float lr = 0.05f;
    std::string consistency = "ssp";
    int staleness = 2;
    std::string data = "/usr/share/datasets/fashion-mnist";
    bool synthetic = false;
    unsigned seed = 1;
    bool async = false;
};

int run_worker(const Options& o, const Data& train, int worker) {
    hopper::ps::KVTable<float> table(o.conninfo, o.table, worker);
    const int dim = train.dim, stride = dim + 1;
    std::vector<int64_t> chunks(kClasses);
    for (int k = 0; k < kClasses; ++k) chunks[size_t(k)] = k;
    std::vector<int> mine;
    for (int i = worker; i < train.n; i += o.workers) mine.push_back(i);
    std::mt19937 rng(o.seed * 1000003u + unsigned(worker));
    std::uniform_int_distribution<size_t> pick(0, mine.size() - 1);
    std::vector<float> w, grad(size_t(kClasses) * stride);
    float p[kClasses];
    double loss_sum = 0;
    std::vector<float> w_next;
    if (o.async) table.GetChunk(chunks, &w);
    for (int it = 0; it < o.iterations; ++it) {
        if (o.async) table.GetChunkAsync(chunks, &w_next);  // the next iteration's weights, while this one computes
        else table.GetChunk(chunks, &w);
        std::fill(grad.begin(), grad.end(), 0.0f);
        float loss = 0;
        for (int b = 0; b < o.batch; ++b) {
            const int i = mine[pick(rng)];
            const float* x = &train.x[size_t(i) * dim];
            const int label = train.y[size_t(i)];
            loss += forward(w, dim, x, label, p);
            for (int k = 0; k < kClasses; ++k) {
                const float g = p[k] - (k == label ? 1.0f : 0.0f);
                float* gk = &grad[size_t(k) * stride];
                for (int j = 0; j < dim; ++j) gk[j] += g * x[j];
                gk[dim] += g;
            }
        }
        const float scale = -o.lr / float(o.batch);
        for (auto& g : grad) g *= scale;
        if (o.async) {
            table.Wait();
            w.swap(w_next);
        }
        table.AddChunk(chunks, grad);
        table.Clock();
        loss_sum += loss / o.batch;
        if (worker == 0 && (it + 1) % std::max(1, o.iterations / 5) == 0) {
            std::printf("worker 0: iteration %d, mean training loss %.4f\n", it + 1,
                        loss_sum / std::max(1, o.iterations / 5));
            std::fflush(stdout);
            loss_sum = 0;
        }
    }
    return 0;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw std::runtime_error("missing value after " + a);
            return argv[++i];
        };
        if (a == "--conninfo") o.conninfo = next();
        else if (a == "--table") o.table = next();
        else if (a == "--workers") o.workers = std::stoi(next());
        else if (a == "--iterations") o.iterations = std::stoi(next());
        else if (a == "--batch") o.batch = std::stoi(next());
        else if (a == "--lr") o.lr = std::stof(next());
        else if (a == "--consistency") o.consistency = next();
        else if (a == "--staleness") o.staleness = std::stoi(next());
        else if (a == "--data") o.data = next();
        else if (a == "--synthetic") o.synthetic = true;
        else if (a == "--seed") o.seed = unsigned(std::stoul(next()));
        else if (a == "--async") o.async = true;
        else throw std::runtime_error("unknown option " + a);
    }
    if (o.workers < 1 || o.iterations < 1 || o.batch < 1)
        throw std::runtime_error("workers, iterations and batch must be >= 1");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options o = parse(argc, argv);
        Data train = o.synthetic ? synthetic(4000, o.seed) : load_idx(o.data, "train");
        Data test = o.synthetic ? synthetic(1000, o.seed + 1) : load_idx(o.data, "t10k");
        const auto t0 = std::chrono::steady_clock::now();  // training time: from the table's creation
        std::printf("data: %d training and %d test samples of %d features%s\n", train.n, test.n, train.dim,
                    o.synthetic ? " (synthetic)" : "");
        hopper::ps::TableOptions opt;
        opt.num_keys = int64_t(kClasses) * (train.dim + 1);
        opt.chunk_size = train.dim + 1;
        opt.consistency = o.consistency == "bsp"          ? hopper::ps::Consistency::BSP
                          : o.consistency == "asp"        ? hopper::ps::Consistency::ASP
                          : o.consistency == "sparse_ssp" ? hopper::ps::Consistency::SparseSSP
                                                          : hopper::ps::Consistency::SSP;
        opt.staleness = o.staleness;
        opt.num_workers = o.workers;
        {
            hopper::ps::Connection conn(o.conninfo);
            hopper::ps::DropTable(conn, o.table, true);
            hopper::ps::CreateTable(conn, o.table, opt);
        }
        std::printf("table %s: %lld keys, %d workers, %s%s\n", o.table.c_str(), (long long)opt.num_keys, o.workers,
                    o.consistency.c_str(),
                    o.consistency == "ssp" ? (" staleness " + std::to_string(o.staleness)).c_str() : "");
        std::fflush(stdout);
        std::vector<pid_t> children;
        for (int w = 0; w < o.workers; ++w) {
            const pid_t pid = fork();
            if (pid < 0) throw std::runtime_error("fork failed");
            if (pid == 0) {
                int rc = 1;
                try {
                    rc = run_worker(o, train, w);
                } catch (const std::exception& e) { std::fprintf(stderr, "worker %d: %s\n", w, e.what()); }
                std::fflush(nullptr);
                _exit(rc);
            }
            children.push_back(pid);
        }
        bool ok = true;
        for (pid_t pid : children) {
            int status = 0;
            waitpid(pid, &status, 0);
            ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
        if (!ok) {
            std::fprintf(stderr, "a worker failed\n");
            return 1;
        }
        const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        // Read the final weights as worker 0 (its session ended, so this one takes it over).
        hopper::ps::KVTable<float> table(o.conninfo, o.table, 0);
        std::vector<int64_t> chunks(kClasses);
        for (int k = 0; k < kClasses; ++k) chunks[size_t(k)] = k;
        std::vector<float> w;
        table.GetChunk(chunks, &w);
        auto waits = table.connection().query("SELECT waits FROM hopper.ps_tables WHERE name = $1", {o.table});
        std::printf("trained %d iterations x %d workers x batch %d in %.2f s (%s waits%s)\n", o.iterations, o.workers,
                    o.batch, train_seconds, waits.empty() ? "?" : waits[0].c_str(),
                    o.async ? ", asynchronous Gets" : "");
        std::printf("train accuracy: %.4f\n", accuracy(w, train));
        std::printf("test accuracy: %.4f\n", accuracy(w, test));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ps_logreg: %s\n", e.what());
        return 1;
    }
}
